// Claims C06–C11 — Section 9.2, "Phép chia cho √d_k". The statistical claims run at the chapter's
// sizes with the programs' default seed, and the cheaper ones again for other seeds.
#include <catch2/catch.hpp>

#include <cmath>

#include "../spec.hpp"
#include "attn/softmax.hpp"
#include "attn/table.hpp"
#include "chapters/03_scaling/scaling_tables.hpp"

using namespace attn;
namespace c92 = attn::chapter92;  // the chapter's figures and tolerances, with their reasons

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
            CHECK(std::fabs(r.mean) / r.sqrt_d < c92::kMeanTolerance);
        }
    }
    // …and the tolerance is tight enough to catch a wrong variance: d/2 would be far outside it.
    CHECK(c92::variance_tolerance(1024, kSizes.pairs) < 0.1);
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

TEST_CASE("C09: 4,000 queries vs 64 keys — unscaled entropy collapses, scaled stays ≈ 3.68", "[claims][C09][sec03]") {
    const auto rows = entropy_table(widths_up_to(kSizes.max_d), kSizes.queries, kSizes.keys, kSeed);
    for (const auto& r : rows) {
        INFO("d_k = " << r.d_k);
        CHECK(r.score_var / r.d_k == Approx(1.0).margin(0.1));  // measured variance matches d_k
        CHECK(r.scaled.entropy == Approx(c92::kScaledEntropy).margin(c92::kScaledEntropyTolerance));  // every d_k
    }
    for (std::size_t i = 1; i < rows.size(); ++i) CHECK(rows[i].unscaled.entropy < rows[i - 1].unscaled.entropy);
    const auto& r1024 = rows.back();
    REQUIRE(r1024.d_k == 1024);
    CHECK(r1024.unscaled.entropy == Approx(c92::kEntropy1024).margin(c92::kEntropyTolerance));
    CHECK(r1024.unscaled.max_weight == Approx(c92::kMaxWeight1024).margin(c92::kMaxWeightTolerance));
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {  // the same for other seeds
        const auto other = entropy_table({1024}, kSizes.queries, kSizes.keys, seed).front();
        INFO("seed " << seed);
        CHECK(other.unscaled.entropy == Approx(c92::kEntropy1024).margin(c92::kEntropyTolerance));
        CHECK(other.unscaled.max_weight == Approx(c92::kMaxWeight1024).margin(c92::kMaxWeightTolerance));
        CHECK(other.scaled.entropy == Approx(c92::kScaledEntropy).margin(c92::kScaledEntropyTolerance));
    }
}

TEST_CASE("C10: unscaled at d_k = 256 a fresh head attends to about one token of 64", "[claims][C10][sec03]") {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
        const auto r = entropy_table({256}, kSizes.queries, kSizes.keys, seed).front();
        INFO("seed " << seed);
        CHECK(r.unscaled.eff_tokens < c92::kAboutOneToken);  // about one token…
        CHECK(r.scaled.eff_tokens > 30.0);                   // …where the scaled head averages over dozens
    }
}

TEST_CASE("C11: scaled Jacobian trace ≈ 0.96 everywhere — ~7 in 10 rows frozen unscaled at d_k = 1024", "[claims][C11][sec03]") {
    const auto rows = saturation_table(widths_up_to(kSizes.max_d), kSizes.rows, kSizes.keys, kSeed);
    for (const auto& r : rows) {
        INFO("d_k = " << r.d_k);
        CHECK(r.trace_scaled == Approx(c92::kTraceScaled).margin(c92::kTraceTolerance));
        CHECK(r.frozen_scaled == 0.0);
    }
    const auto& r1024 = rows.back();
    REQUIRE(r1024.d_k == 1024);
    CHECK(r1024.frozen_unscaled == Approx(c92::kFrozen1024).margin(c92::kFrozenTolerance));
    CHECK(r1024.trace_unscaled < 0.1);
    for (std::uint64_t seed = 1; seed < 4; ++seed) {  // other seeds, at d_k = 1024
        const auto r = saturation_table({1024}, kSizes.rows, kSizes.keys, seed).front();
        INFO("seed " << seed);
        CHECK(r.frozen_unscaled == Approx(c92::kFrozen1024).margin(c92::kFrozenTolerance));
        CHECK(r.trace_scaled == Approx(c92::kTraceScaled).margin(c92::kTraceTolerance));
    }
}
