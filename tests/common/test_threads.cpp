// Issue 12: training is bit-for-bit the same on one thread and on two. A large product is cut into blocks of
// rows or columns (matmul.cpp), never of its inner sum, and each block stays the same kind of OpenBLAS
// product as the whole; attention's (sequence, head) units and the elementwise rows share no output. So each
// float is computed by the same operations in the same order whatever the thread count.
#include <catch2/catch.hpp>

#include <cstring>

#include "attn/matmul.hpp"
#include "attn/model.hpp"
#include "attn/train.hpp"

using namespace attn;

namespace {
// The ladder's full block at its --quick width and context, 3 steps of training on random tokens at `threads`
// threads → every weight. A batch of 16 has products just above the 4 Mflop at which they are cut, whose
// halves sit near OpenBLAS's small-product line (cutting across it changed bits); 64, products up to 33 Mflop.
std::vector<float> trained_weights(int threads, std::size_t batch, std::size_t* products_cut) {
    const LmSetup s{.d_model = 32, .T = 32, .batch = batch};
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
    const std::size_t before = split_products();
    train_loop(model, sample, s.batch, s.T, tc);
    if (products_cut) *products_cut = split_products() - before;
    fix_blas_threads(0);
    std::vector<float> w;
    for (const Param& p : model.params().all()) w.insert(w.end(), p.value.begin(), p.value.end());
    return w;
}
}  // namespace

TEST_CASE("training gives bit-identical weights on 1 and 2 threads", "[train][threads]") {
    const std::size_t batch = GENERATE(16, 64);
    CAPTURE(batch);
    std::size_t cut_on_one = 0, cut_on_two = 0;
    const std::vector<float> one = trained_weights(1, batch, &cut_on_one), two = trained_weights(2, batch, &cut_on_two);
    // Two threads really ran: products were cut between them (and none on one thread).
    CHECK(cut_on_one == 0);
    REQUIRE(cut_on_two > 0);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}
