// Training is bit-for-bit the same on one thread and on two, and the same call gives the same bits wherever it
// comes in a process. A large product is cut into pieces chosen from its shape alone (matmul.cpp), one thread
// or many running the very same OpenBLAS calls; attention's (sequence, head) units and the elementwise rows
// share no output. So each float is computed by the same operations in the same order whatever the thread
// count, under any OpenBLAS kernel (tools/test.sh runs these under the AVX2 kernels too).
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/side_by_side.hpp"
#include "fast/matmul.hpp"
#include "fast/model.hpp"
#include "train/engine.hpp"
#include "train/train.hpp"

using namespace attn;

namespace {
// The ladder's full block at its --quick width and context, 3 steps of training on random tokens at `threads`
// threads (0: the default choice) → every weight. A batch of 32 has products just large enough to be cut in
// two (8.4 Mflop; a piece has at least 4); 64, products up to 33 Mflop.
std::vector<float> trained_weights_seed(int threads, std::size_t batch, std::uint64_t seed, std::size_t* products_cut = nullptr) {
    const LmSetup s{.d_model = 32, .T = 32, .batch = batch};
    const std::size_t V = 64;
    fast::Model model({.vocab = V, .max_T = s.T, .d_model = s.d_model, .n_heads = 4, .d_ff = 4 * s.d_model, .norm = Norm::pre}, seed);
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(s.batch * s.T), targets.resize(s.batch * s.T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
    };
    TrainConfig tc;
    tc.batch = s.batch, tc.seed = seed, tc.progress = false, tc.steps = 3;
    fast::fix_blas_threads(threads);
    const std::size_t before = fast::split_products();
    train_loop(model, sample, s.batch, s.T, tc);
    if (products_cut) *products_cut = fast::split_products() - before;
    fast::fix_blas_threads(0);
    std::vector<float> w;
    for (const Param& p : model.params().all()) w.insert(w.end(), p.value.begin(), p.value.end());
    return w;
}
std::vector<float> trained_weights(int threads, std::size_t batch, std::size_t* products_cut) {
    return trained_weights_seed(threads, batch, 5, products_cut);
}
}  // namespace

TEST_CASE("training gives bit-identical weights on 1 and 2 threads", "[train][threads][bits]") {
    const std::size_t batch = GENERATE(32, 64);
    CAPTURE(batch);
    std::size_t cut_on_one = 0, cut_on_two = 0;
    const std::vector<float> one = trained_weights(1, batch, &cut_on_one), two = trained_weights(2, batch, &cut_on_two);
    // Two threads really ran: products were cut between them (and none on one thread).
    CHECK(cut_on_one == 0);
    REQUIRE(cut_on_two > 0);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}

// Without fix_blas_threads a process switches to every core at its first product of ≥ 1e8 flops: that switch
// may change the speed, never the arithmetic. The same training before such a product (on one thread, as a
// fresh process runs) and after it (on the default, now every core): the same bits.
TEST_CASE("the same training twice in one process, before and after a large product: the same bits", "[train][threads][bits]") {
    const std::vector<float> before = trained_weights(1, 64, nullptr);
    Rng rng(1);
    const Mat a = rng.normal_mat(1024, 512), b = rng.normal_mat(512, 128);  // 1.3e8 flops
    const Mat c = fast::matmul(a, b);
    CHECK(std::isfinite(c(0, 0)));
    cpu_set_t cpus;
    const int cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;  // the cores this process may run on
    const char* cap = std::getenv("ATTN_THREADS");  // a learner's environment may cap the threads (matmul.hpp)
    const int usable = cap != nullptr && std::atoi(cap) > 0 ? std::min(cores, std::atoi(cap)) : cores;
    INFO("cores " << cores << ", ATTN_THREADS " << (cap ? cap : "unset") << ", threads after the large product " << fast::blas_threads());
    std::size_t shared = 0;
    const std::vector<float> after = trained_weights(0, 64, &shared);
    if (usable > 1) {  // the switch really happened, and the second run shared products between threads
        CHECK(fast::blas_threads() > 1);
        CHECK(shared > 0);
    }
    REQUIRE(before.size() == after.size());
    CHECK(std::memcmp(before.data(), after.data(), before.size() * sizeof(float)) == 0);
    // and a second seed gives other weights, so the comparison above can fail
    CHECK(before != trained_weights_seed(0, 64, 6));
}

namespace {
// The ladder's full block at width 32, 3 steps on random tokens, by either engine, without touching the thread
// settings (jobs side by side must not: they share the process) → every weight.
std::vector<float> quietly_trained(Engine engine, std::uint64_t seed) {
    const std::size_t V = 64, T = 16, B = 8;
    const ModelConfig config{.vocab = V, .max_T = T, .d_model = 32, .n_heads = 4, .d_ff = 128, .norm = Norm::pre};
    const std::unique_ptr<LanguageModel> model = make_cpu_model(config, seed, engine);
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(B * T), targets.resize(B * T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
    };
    TrainConfig tc;
    tc.batch = B, tc.seed = seed, tc.progress = false, tc.steps = 3;
    train_loop(*model, sample, B, T, tc);
    std::vector<float> w;
    for (const Param& p : model->params().all()) w.insert(w.end(), p.value.begin(), p.value.end());
    return w;
}
}  // namespace

// The seeds of a sweep train side by side (core/side_by_side.hpp): each seed's weights are the bits it gives alone.
TEST_CASE("seeds trained side by side give the bits each gives alone, by either engine", "[train][threads][bits]") {
    const Engine engine = GENERATE(Engine::reference, Engine::fast);
    CAPTURE(engine == Engine::reference ? "reference" : "fast");
    const std::size_t n = 4;
    std::vector<std::vector<float>> alone(n), together(n);
    for (std::size_t i = 0; i < n; ++i) alone[i] = quietly_trained(engine, 10 + i);
    std::vector<int> helper(n, -1);
    SideBySide jobs(n, [&](std::size_t i) {
        helper[i] = in_side_by_side() ? 1 : 0;
        together[i] = quietly_trained(engine, 10 + i);
    }, 3);  // three threads, whatever ATTN_THREADS says: the caller and two helpers
    jobs.wait();
    CHECK(std::count(helper.begin(), helper.end(), 1) >= 1);  // some ran on a helper while the caller waited
    for (std::size_t i = 0; i < n; ++i) {
        INFO("seed " << 10 + i);
        REQUIRE(alone[i].size() == together[i].size());
        CHECK(std::memcmp(alone[i].data(), together[i].data(), alone[i].size() * sizeof(float)) == 0);
    }
    CHECK(alone[0] != alone[1]);  // seeds differ, so the comparison above can fail
}

TEST_CASE("side_by_side runs every job once, serially at one thread, and rethrows the lowest-numbered failure", "[threads]") {
    for (int threads : {1, 2, 4}) {
        CAPTURE(threads);
        std::vector<int> runs(7, 0);
        side_by_side(runs.size(), [&](std::size_t i) { ++runs[i]; }, threads);
        CHECK(std::all_of(runs.begin(), runs.end(), [](int r) { return r == 1; }));
    }
    std::vector<std::thread::id> where(3);
    side_by_side(where.size(), [&](std::size_t i) { where[i] = std::this_thread::get_id(); }, 1);
    CHECK(std::all_of(where.begin(), where.end(), [](std::thread::id t) { return t == std::this_thread::get_id(); }));
    // Jobs 2 and 5 fail: at one thread job 2 stops the rest (3 onwards never start), and its error is the one seen.
    std::vector<int> started(7, 0);
    auto failing = [&](std::size_t i) {
        started[i] = 1;
        if (i == 2 || i == 5) throw Error("job " + std::to_string(i));
    };
    try {
        side_by_side(started.size(), failing, 1);
        FAIL("no exception");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("job 2") != std::string::npos);
    }
    CHECK(std::accumulate(started.begin(), started.end(), 0) == 3);
    std::fill(started.begin(), started.end(), 0);
    CHECK_THROWS_WITH(side_by_side(started.size(), failing, 3), Catch::Contains("job 2"));
    CHECK_NOTHROW(side_by_side(0, failing, 2));  // no jobs: nothing runs
}
