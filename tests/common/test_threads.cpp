// Issue 12: training is bit-for-bit the same on one BLAS thread and on two. OpenBLAS splits a product's rows
// and columns between threads, never its inner sum, and every kernel of ours runs one thread in a fixed order,
// so each float is computed by the same operations in the same order whatever the thread count.
#include <catch2/catch.hpp>

#include <cstring>

#include "attn/matmul.hpp"
#include "attn/model.hpp"
#include "attn/train.hpp"

using namespace attn;

namespace {
// The ladder's full block at its --quick size, 3 steps of training on random tokens at `threads` BLAS threads
// → every weight.
std::vector<float> trained_weights(int threads, int* threads_used = nullptr) {
    const LmSetup s{.d_model = 32, .T = 32, .batch = 16};
    const std::size_t V = 64;
    Model model({.vocab = V, .max_T = s.T, .d_model = s.d_model, .n_heads = 4, .d_ff = 4 * s.d_model, .norm = Norm::pre}, 5);
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(s.batch * s.T), targets.resize(s.batch * s.T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
    };
    TrainConfig tc;
    tc.batch = s.batch, tc.seed = 5, tc.progress = false, tc.steps = 3;
    fix_blas_threads(threads);
    train_loop(model, sample, s.batch, s.T, tc);
    if (threads_used) *threads_used = blas_threads();
    fix_blas_threads(0);
    std::vector<float> w;
    for (const Param& p : model.params().all()) w.insert(w.end(), p.value.begin(), p.value.end());
    return w;
}
}  // namespace

TEST_CASE("training gives bit-identical weights on 1 and 2 BLAS threads", "[train][threads]") {
    int used = 0;
    const std::vector<float> one = trained_weights(1), two = trained_weights(2, &used);
    // Two threads really ran: with a single-threaded OpenBLAS both runs would be one computation.
    REQUIRE(used == 2);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}
