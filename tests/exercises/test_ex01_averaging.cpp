// Exercises 1.1–1.3 (Section 9.1). Built twice: against exercises/ (label `exercises`, yours) and
// against solutions/ (the default tests). Run one: `./build/bin/exercise_tests "[ex1.1]"`.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "expect.hpp"
#include "01_averaging/averaging.hpp"
#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"

using attn::Mat;

namespace {
// Known mistake: each row divided by T, the number of rows, instead of t + 1, the length of its prefix.
Mat divided_by_T(const Mat& x) {
    Mat y = spec::prefix_mean(x);
    for (std::size_t t = 0; t < x.shape(0); ++t)
        for (std::size_t j = 0; j < x.shape(1); ++j) y(t, j) *= static_cast<float>(t + 1) / static_cast<float>(x.shape(0));
    return y;
}
}  // namespace

TEST_CASE("Exercise 1.1: prefix_average — the loop of means", "[ex1.1][sec01]") {
    const Mat x = {{1, 4}, {3, 2}, {5, 0}};  // the values of Section 9.4's example
    const std::vector<ex_test::Mistake<Mat>> mistakes = {{"dividing each prefix sum by T instead of t + 1", divided_by_T(x)}};
    if (!ex_test::expect_close(ex::prefix_average(x), Mat{{1, 4}, {2, 3}, {3, 2}}, 1e-6, "x = ((1, 4), (3, 2), (5, 0))", mistakes))
        return;
    attn::Rng rng(101);
    for (int trial = 0; trial < 10; ++trial) {  // random shapes against the plain-loop spec; stop at the first failure
        const Mat r = rng.normal_mat(1 + rng.below(20), 1 + rng.below(8));
        if (!ex_test::expect_close(ex::prefix_average(r), spec::prefix_mean(r), 1e-5,
                                   "random trial " + std::to_string(trial) + ", x " + attn::shape_str(r),
                                   {{"dividing each prefix sum by T instead of t + 1", divided_by_T(r)}}))
            break;
    }
}

TEST_CASE("Exercise 1.2: averaging_matrix — lower-triangular, rows sum to 1", "[ex1.2][sec01]") {
    const Mat A = ex::averaging_matrix(6);
    REQUIRE(A.shape() == std::array<std::size_t, 2>{6, 6});
    for (std::size_t t = 0; t < 6; ++t) {
        INFO("row " << t);
        for (std::size_t i = 0; i <= t; ++i) CHECK(A(t, i) == Approx(1.0 / (t + 1)));
        for (std::size_t i = t + 1; i < 6; ++i) CHECK(A(t, i) == 0.0f);
    }
    attn::Rng rng(102);
    const Mat x = rng.normal_mat(9, 3);
    CHECK(attn::max_abs_diff(spec::matmul(ex::averaging_matrix(9), x), spec::prefix_mean(x)) < 1e-5);
}

TEST_CASE("Exercise 1.3: causal_scores — zeros below, -inf above, softmax gives A", "[ex1.3][sec01]") {
    const Mat s = ex::causal_scores(5);
    REQUIRE(s.shape() == std::array<std::size_t, 2>{5, 5});
    for (std::size_t t = 0; t < 5; ++t) {
        INFO("row " << t);
        for (std::size_t i = 0; i <= t; ++i) CHECK(s(t, i) == 0.0f);
        for (std::size_t i = t + 1; i < 5; ++i) CHECK(s(t, i) == -std::numeric_limits<float>::infinity());
    }
    // Softmax of each row gives the averaging matrix: 1/(t+1) on and below the diagonal.
    const Mat w = spec::softmax_rows(s);
    for (std::size_t t = 0; t < 5; ++t)
        for (std::size_t i = 0; i <= t; ++i) CHECK(w(t, i) == Approx(1.0 / (t + 1)));
}
