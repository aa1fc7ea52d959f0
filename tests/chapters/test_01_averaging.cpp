// Claims C04, C05 — Section 9.1, "Attention như phép tra cứu mềm": averaging a growing prefix; the shuffle test. Then the section's
// code against plain-loop specs on random shapes, and its errors.
#include <catch2/catch.hpp>

#include <sstream>

#include <xtensor-blas/xlinalg.hpp>

#include "../spec.hpp"
#include "chapters/01_averaging/shuffle_test.hpp"
#include "chapters/01_averaging/three_ways.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "math/averaging.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "report/table.hpp"

using namespace attn;
using namespace attn::sec01;  // chapters/01_averaging/
using Catch::Matchers::Contains;

// "Float noise": fp32 sums of O(1) numbers reordered differ by a few ulps (~6e-8 at magnitude 1);
// 1e-6 is 16 ulps, far below any real difference between the three computations.
constexpr double kFloatNoise = 1e-6;

TEST_CASE("C04: loop, matmul and softmax averages agree to float noise — A for T=6", "[claims][C04][sec01]") {
    Rng rng(0);  // the program's default seed and sizes: T = 6, d = 8
    const Mat x = rng.normal_mat(6, 8);
    const ThreeWays r = average_three_ways(x);
    CHECK(r.loop_vs_matmul < kFloatNoise);
    CHECK(r.loop_vs_softmax < kFloatNoise);
    CHECK(max_abs_diff(r.matmul, r.softmax) < kFloatNoise);
    // A for T = 6 prints exactly as the chapter's block.
    std::ostringstream printed;
    print_matrix(printed, averaging_matrix(6), 3);
    CHECK(printed.str() ==
          "  1.000 0.000 0.000 0.000 0.000 0.000\n"
          "  0.500 0.500 0.000 0.000 0.000 0.000\n"
          "  0.333 0.333 0.333 0.000 0.000 0.000\n"
          "  0.250 0.250 0.250 0.250 0.000 0.000\n"
          "  0.200 0.200 0.200 0.200 0.200 0.000\n"
          "  0.167 0.167 0.167 0.167 0.167 0.167\n");
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {  // and not only for one seed
        Rng other(seed);
        const ThreeWays s = average_three_ways(other.normal_mat(50, 16));
        CHECK(s.loop_vs_matmul < kFloatNoise);
        CHECK(s.loop_vs_softmax < kFloatNoise);
    }
}

TEST_CASE("C05: the shuffle test — the last row of A gives the same summary for any order", "[claims][C05][sec01]") {
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
        Rng rng(seed);
        const Mat x = rng.normal_mat(6, 8);
        const ShuffleTest r = shuffle_test(x, rng.permutation(6));
        CHECK(r.max_abs_diff < kFloatNoise);
    }
    // The averaged context of "the dog bit the man" and "the man bit the dog" is one vector.
    Rng rng(0);
    const Mat embedding = rng.normal_mat(4, 8);
    CHECK(max_abs_diff(context_average(gather_rows(embedding, {0, 1, 2, 0, 3})),
                       context_average(gather_rows(embedding, {0, 3, 2, 0, 1}))) < kFloatNoise);
    // …whereas a position-dependent weighting tells them apart, so the check above is not vacuous.
    const Vec ramp = Vec{1, 2, 3, 4, 5} / 15.0f;  // (T,) weights that grow with the position
    CHECK(max_abs_diff(Vec(xt::linalg::dot(ramp, gather_rows(embedding, {0, 1, 2, 0, 3}))),
                       Vec(xt::linalg::dot(ramp, gather_rows(embedding, {0, 3, 2, 0, 1})))) > 0.01);
}

TEST_CASE("three ways of averaging agree with the spec on random shapes", "[averaging]") {
    Rng rng(33);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t T = 1 + rng.below(40), d = 1 + rng.below(10);
        const Mat x = rng.normal_mat(T, d);
        const ThreeWays r = average_three_ways(x);
        const Mat expected = spec::prefix_mean(x);
        CHECK(max_abs_diff(r.loop, expected) < 1e-5);
        CHECK(max_abs_diff(r.matmul, expected) < 1e-5);
        CHECK(max_abs_diff(r.softmax, expected) < 1e-5);
    }
}

TEST_CASE("the averaging matrix is lower-triangular with rows summing to 1", "[averaging]") {
    const Mat A = averaging_matrix(5);
    for (std::size_t t = 0; t < 5; ++t) {
        CHECK(xt::sum(xt::row(A, t))() == Approx(1.0));
        for (std::size_t i = t + 1; i < 5; ++i) CHECK(A(t, i) == 0.0f);
    }
    CHECK(max_abs_diff(softmax_rows(causal_zero_scores(5)), A) < 1e-7);
}

TEST_CASE("gather_rows and shuffle_test check their indices", "[averaging][errors]") {
    const Mat x = xt::zeros<float>({3, 2});
    CHECK_THROWS_WITH(gather_rows(x, {0, 3}), "gather_rows: row index 3 out of range for x (3, 2)");
    CHECK_THROWS_WITH(shuffle_test(x, {0, 1}), Contains("permutation of 2 rows for x (3, 2)"));
    CHECK_THROWS_AS(average_three_ways(Mat(xt::zeros<float>({0, 2}))), Error);
}
