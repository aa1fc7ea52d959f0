// Claims C06–C11 — Section 9.2, "Phép chia cho √d_k". The statistical claims run at the chapter's
// sizes, at the programs' default seed and at other seeds, against tolerances sized from the spread over
// 30 seeds (03_scaling --seeds 30; the figures are in scaling_tables.hpp, namespace chapter92).
#include <catch2/catch.hpp>

#include <cmath>

#include "../spec.hpp"
#include "attn/softmax.hpp"
#include "attn/table.hpp"
#include "chapters/03_scaling/scaling_tables.hpp"

using namespace attn;
using namespace attn::sec03;  // chapters/03_scaling/
namespace c92 = attn::sec03::chapter92;  // the chapter's figures and tolerances, with their reasons

namespace {
const ScalingSizes kSizes;  // the chapter's sizes = the program's defaults
const std::uint64_t kSeed = 0;
}  // namespace

TEST_CASE("C06: mean 0, Var(q.k) = d_k and std = sqrt(d_k) over 20,000 pairs", "[claims][C06][sec03]") {
    for (std::uint64_t seed : {kSeed, std::uint64_t{1}, std::uint64_t{2}}) {
        const auto rows = variance_table(widths_up_to(kSizes.max_d), kSizes.pairs, seed);
        REQUIRE(rows.size() == 5);
        for (const auto& r : rows) {
            INFO("seed " << seed << ", d = " << r.d << ", mean = " << r.mean << ", Var = " << r.var);
            CHECK(r.var / r.d == Approx(1.0).margin(c92::variance_tolerance(r.d, kSizes.pairs)));
            CHECK(r.std == Approx(r.sqrt_d).epsilon(c92::variance_tolerance(r.d, kSizes.pairs) / 2));
            CHECK(std::fabs(r.mean) / r.sqrt_d < c92::mean_tolerance(kSizes.pairs));
        }
    }
    // …and the tolerance is tight enough to catch a wrong variance: d/2 would be far outside it.
    CHECK(c92::variance_tolerance(1024, kSizes.pairs) < 0.1);
    // The chapter's own table (3.975, 16.071, 64.249, 253.065, 1015.562) is inside the same bounds.
    const double chapter[] = {3.975, 16.071, 64.249, 253.065, 1015.562};
    for (int i = 0, d = 4; i < 5; ++i, d *= 4) CHECK(std::fabs(chapter[i] / d - 1) < c92::variance_tolerance(d, kSizes.pairs));
}

TEST_CASE("C07: softmax(0.2, -0.1, 0.4, 0) and eight times the scores", "[claims][C07][sec03]") {
    const Vec s = {0.2f, -0.1f, 0.4f, 0.0f};
    CHECK(fmt_vec(softmax(s), 2) == "(0.26, 0.20, 0.32, 0.22)");
    const Vec p8 = softmax(Vec(8.0f * s));
    // The chapter's (0.16, 0.02, 0.79, 0.03) is rounded to sum to 1; rounded alone the second is 0.01.
    CHECK(fmt_vec(round_preserving_sum(p8, 2), 2) == "(0.16, 0.02, 0.79, 0.03)");
    CHECK(fmt_vec(p8, 2) == "(0.16, 0.01, 0.79, 0.03)");
    CHECK(p8(2) > 0.79);  // nearly all on one key
}

TEST_CASE("C08: the softmax Jacobian is p_i(δ_ij − p_j), near zero when p is near one-hot", "[claims][C08][sec03]") {
    const Vec s = {0.2f, -0.1f, 0.4f, 0.0f};
    const Vec p = softmax(s);
    const Mat J = softmax_jacobian(p);
    CHECK(J(0, 0) == Approx(p(0) * (1 - p(0))));
    CHECK(J(0, 2) == Approx(-p(0) * p(2)));
    CHECK(xt::amax(xt::abs(J))() > 0.1);  // a soft row passes gradient
    const Mat J32 = softmax_jacobian(softmax(Vec(32.0f * s)));
    CHECK(xt::amax(xt::abs(J32))() < 0.01);  // a nearly one-hot row does not
    // The formula is the derivative: compare with central differences of softmax itself.
    const Mat numeric = spec::softmax_jacobian_fd(s);
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) CHECK(J(i, j) == Approx(numeric(i, j)).margin(1e-4));
}

// Seeds 3, 777 and 12345 are three where the older fixed tolerances (±0.05 nat, ±0.01 on the trace) printed
// DIFFERS at d_k = 4 from the 64 keys' sampling noise alone.
const std::uint64_t kOtherSeeds[] = {3, 777, 12345};

TEST_CASE("C09: 4,000 queries vs 64 keys — unscaled entropy collapses, scaled stays ≈ 3.68 at every d_k", "[claims][C09][sec03]") {
    const double tol_h = c92::tolerance(c92::kEntropySd, c92::kThreeDecimals);
    const double tol_w = c92::tolerance(c92::kMaxWeightSd, c92::kThreeDecimals);
    for (std::uint64_t seed : {kSeed, kOtherSeeds[0], kOtherSeeds[1], kOtherSeeds[2]}) {
        const auto rows = entropy_table(widths_up_to(kSizes.max_d), kSizes.queries, kSizes.keys, seed);
        REQUIRE(rows.size() == 5);
        for (const auto& r : rows) {
            INFO("seed " << seed << ", d_k = " << r.d_k << ": score variance " << r.score_var << ", scaled entropy " << r.scaled.entropy);
            CHECK(std::fabs(r.score_var / r.d_k - 1) < c92::kSpreads * c92::kScoreVarianceSd.at(r.d_k));  // matches d_k
            CHECK(std::fabs(r.scaled.entropy - c92::kScaledEntropy) <
                  c92::tolerance(c92::kScaledEntropySd.at(r.d_k), c92::kTwoDecimals));  // every d_k
        }
        for (std::size_t i = 1; i < rows.size(); ++i) CHECK(rows[i].unscaled.entropy < rows[i - 1].unscaled.entropy);
        const auto& r1024 = rows.back();
        INFO("seed " << seed << ", d_k = 1024: unscaled entropy " << r1024.unscaled.entropy << ", max weight " << r1024.unscaled.max_weight);
        CHECK(std::fabs(r1024.unscaled.entropy - c92::kEntropy1024) < tol_h);
        CHECK(std::fabs(r1024.unscaled.max_weight - c92::kMaxWeight1024) < tol_w);
    }
    // The bounds still tell the two regimes apart: without the division at d_k = 4 the entropy (2.8) is far outside
    // the scaled bound, and at d_k = 1024 a 10 % error in the collapsed entropy is outside its bound.
    CHECK(c92::tolerance(c92::kScaledEntropySd.at(4), c92::kTwoDecimals) < 0.5);
    CHECK(tol_h < 0.1 * c92::kEntropy1024 + 0.01);
    CHECK(tol_w < 0.02);
}

TEST_CASE("C10: unscaled at d_k = 256 a fresh head attends to about one token of 64", "[claims][C10][sec03]") {
    for (std::uint64_t seed : {kSeed, kOtherSeeds[0], kOtherSeeds[1], kOtherSeeds[2]}) {
        const auto r = entropy_table({256}, kSizes.queries, kSizes.keys, seed).front();
        INFO("seed " << seed << ": " << r.unscaled.eff_tokens << " effective tokens");
        CHECK(r.unscaled.eff_tokens < c92::kOneToken);  // one token…
        CHECK(r.scaled.eff_tokens > 30.0);              // …where the scaled head averages over dozens
    }
}

TEST_CASE("C11: scaled Jacobian trace ≈ 0.96 at every width — ~7 in 10 rows frozen unscaled at d_k = 1024", "[claims][C11][sec03]") {
    const double tol_frozen = c92::tolerance(c92::kFrozenSd, c92::kTenths);
    for (std::uint64_t seed : {kSeed, kOtherSeeds[0], kOtherSeeds[1], kOtherSeeds[2]}) {
        const auto rows = saturation_table(widths_up_to(kSizes.max_d), kSizes.rows, kSizes.keys, seed);
        REQUIRE(rows.size() == 5);
        for (const auto& r : rows) {
            INFO("seed " << seed << ", d_k = " << r.d_k << ": scaled trace " << r.trace_scaled);
            CHECK(std::fabs(r.trace_scaled - c92::kTraceScaled) < c92::tolerance(c92::kTraceScaledSd.at(r.d_k), c92::kTwoDecimals));
            CHECK(r.frozen_scaled == 0.0);
        }
        const auto& r1024 = rows.back();
        INFO("seed " << seed << ", d_k = 1024: frozen unscaled " << r1024.frozen_unscaled);
        CHECK(std::fabs(r1024.frozen_unscaled - c92::kFrozen1024) < tol_frozen);
        CHECK(r1024.trace_unscaled < 0.1);
    }
    // The unscaled trace at d_k = 4 (0.85) is outside even the widest bound on the scaled one.
    CHECK(c92::tolerance(c92::kTraceScaledSd.at(4), c92::kTwoDecimals) < 0.05);
}

TEST_CASE("C09–C11: each width reads its own spread", "[claims][C09][C11][sec03]") {
    CHECK(c92::kTraceScaledSd.at(4) == c92::kTraceScaledSd.sd[0]);
    CHECK(c92::kTraceScaledSd.at(1024) == c92::kTraceScaledSd.sd[4]);
    CHECK(c92::kTraceScaledSd.at(4096) == c92::kTraceScaledSd.sd[4]);  // above 1024: the spread only shrinks
    CHECK(c92::kScaledEntropySd.at(64) == c92::kScaledEntropySd.sd[2]);
    CHECK_THROWS_WITH(c92::kTraceScaledSd.at(2), Catch::Contains("widths start at 4"));
}
