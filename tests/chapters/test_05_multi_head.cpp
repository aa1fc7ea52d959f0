// Claims C13, C14 — Section 9.3: the scale and the parameters of multi-head attention, and what the heads buy.
// Each verdict is the program's own criterion (chapters/05_multi_head/claims.cpp), fed here the figures the program
// measures, the chapter's, and contradicting ones.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "chapters/05_multi_head/claims.hpp"
#include "chapters/05_multi_head/sublayer.hpp"
#include "core/rng.hpp"
#include "math/stats.hpp"

using namespace attn;
using namespace attn::sec05;  // chapters/05_multi_head/

namespace {
const std::vector<std::size_t> kHeadCounts = {1, 2, 4, 8, 16};  // the program's table
}  // namespace

TEST_CASE("C13: d = 512, h = 8 gives d_k = 64 and scale 8 — W_q, W_k, W_v, W_o hold 4d^2 for every h", "[claims][C13][sec05]") {
    const std::size_t d = 512;
    std::vector<std::size_t> params;
    for (std::size_t h : kHeadCounts) params.push_back(attention_params(d, h));
    CHECK(params == std::vector<std::size_t>(kHeadCounts.size(), 1048576u));  // 4 d², counted from the model's tensors
    // Per-head scores of N(0, 1) vectors have variance d_k = 64, so the right divisor is sqrt(64) = 8.
    Rng rng(13);
    const Mat q = rng.normal_mat(128, d), k = rng.normal_mat(128, d);
    const Tensor3 s = per_head_scores(q, k, 8);  // (8, 128, 128)
    const double var = variance_of(s.data(), s.size());
    CHECK(var / 512 < 0.2);  // dividing by sqrt(512) would flatten them
    // The forward's divisor, on 32 of those tokens as the program measures it, and the program's criterion on it all.
    const Mat x32 = xt::view(q, xt::range(0, 32), xt::all());  // (32, d)
    const SplitFigures measured{.d_model = d,
                                .n_heads = 8,
                                .score_variance = var,  // 131,072 scores: sd of the ratio to 64 about 0.005
                                .off_by_dk = forward_vs_divisor(x32, 8, 8.0, 13),
                                .off_by_d = forward_vs_divisor(x32, 8, std::sqrt(512.0), 13),
                                .params = params};
    const Claim c13 = c13_claim(measured);
    INFO(c13.ours << "; forward vs / 8: " << measured.off_by_dk << ", vs / sqrt(512): " << measured.off_by_d);
    CHECK(c13.verdict == Verdict::agrees);
}

TEST_CASE("C13: the multi-head forward divides each head's scores by sqrt(d_k) = 8, not sqrt(d_model)", "[claims][C13][sec05]") {
    // d = 512, h = 8: the forward's weights against softmax(q_h k_h^T / divisor), computed from each head's slice of
    // x W_q and x W_k (forward_vs_divisor). A forward that divided by sqrt(512) (or not at all) fails the first check.
    const std::size_t d = 512, h = 8, T = 12;
    Rng rng(130);
    const Mat x = rng.normal_mat(T, d);  // (T, d)
    CHECK(forward_vs_divisor(x, h, 8.0, 130) < kRounding);  // float rounding of a 12-term softmax
    // per-head scores have sd 8 here; divided by sqrt(512) ≈ 22.6 instead, or by 1, the weights move far more than rounding
    CHECK(forward_vs_divisor(x, h, std::sqrt(512.0), 130) > kWrongDivisor);
    CHECK(forward_vs_divisor(x, h, 1.0, 130) > kWrongDivisor);
    // and the check reads every head: the forward against itself at one head misses the eight-head divisor
    CHECK(forward_vs_divisor(x, 1, 8.0, 130) > kWrongDivisor);
}

TEST_CASE("C13, C14's criteria: the chapter's figures agree, figures that contradict them differ", "[claims][C13][C14][sec05]") {
    // C13: d_k = 64, the forward divides by 8 (0 off), by sqrt(512) it would miss by 0.344 (seed 0), 4 d² at every h
    const SplitFigures chapter{.d_model = 512, .n_heads = 8, .score_variance = 64, .off_by_dk = 0, .off_by_d = 0.344,
                               .params = std::vector<std::size_t>(kHeadCounts.size(), 1048576u)};
    CHECK(c13_claim(chapter).verdict == Verdict::agrees);
    auto with = [&](auto change) {
        SplitFigures f = chapter;
        change(f);
        return c13_claim(f).verdict;
    };
    CHECK(with([](SplitFigures& f) { f.n_heads = 4, f.score_variance = 128; }) == Verdict::differs);    // d_k = 128
    CHECK(with([](SplitFigures& f) { f.off_by_dk = 0.344, f.off_by_d = 0; }) == Verdict::differs);       // the forward divides by sqrt(d)
    CHECK(with([](SplitFigures& f) { f.off_by_dk = 0.01; }) == Verdict::differs);                        // by neither
    CHECK(with([](SplitFigures& f) { f.off_by_d = 0.01; }) == Verdict::differs);                         // a check that cannot tell
    CHECK(with([](SplitFigures& f) { f.params[3] = 1048576u + 4 * 512; }) == Verdict::differs);          // biases at h = 8
    CHECK(with([](SplitFigures& f) { f.score_variance = 512; }) == Verdict::differs);                    // full-width scores
    CHECK(with([](SplitFigures& f) { f.score_variance = 64 * (1 + 2 * kVarianceTol); }) == Verdict::differs);

    // C14 over seeds 0…4 at the program's width 64 (held-out points: four heads 100 %, one head 54.7 … 74.1 %), and at
    // the chapter's width 128 (16,512 extra parameters)
    const std::vector<std::uint64_t> seeds = {0, 1, 2, 3, 4};
    const std::vector<double> measured = {45.3, 25.9, 41.6, 35.9, 35.3};
    auto c14 = [&](std::vector<double> gaps, std::size_t d, std::size_t extra) {
        ClaimReport report;
        add_c14_claim(report, {.seeds = seeds, .gaps = std::move(gaps), .d_model = d, .extra_params = extra, .steps = 3000});
        REQUIRE(report.claims().size() == 1);
        return report.claims().front();
    };
    CHECK(c14(measured, 64, 64 * 64 + 64).verdict == Verdict::agrees);
    CHECK(c14({3, 2.5, 3.5, 2.8, 3.1}, 128, 16512).verdict == Verdict::agrees);
    CHECK(c14({-3, -2.5, -3.5, -2.8, -3.1}, 128, 16512).verdict == Verdict::differs);  // four heads worse
    const Claim miscounted = c14(measured, 64, 64 * 64 + 65);                         // one parameter more than W_o and its bias
    CHECK(miscounted.verdict == Verdict::differs);
    CHECK_THAT(miscounted.ours, Catch::Contains("(NOT)"));
    CHECK(c14({10, -10, 5, -5, 0}, 64, 64 * 64 + 64).verdict == Verdict::unresolved);  // the seeds disagree
}
