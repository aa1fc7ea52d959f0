// Exercises 1.1–1.3 (Section 9.1). Built twice: against exercises/ (label `exercises`, yours) and
// against solutions/ (the default tests). Run one: `./build/bin/exercise_tests "[ex1.1]"`.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "01_averaging/averaging.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "property.hpp"

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

// Varies: the worked example (3, 2); x of one row and of one column (the smallest legal T and d); random
// shapes T 1..20, d 1..8, so every loop bound and every row's divisor t + 1 is exercised.
TEST_CASE("Exercise 1.1: prefix_average — the loop of means", "[ex1.1][sec01]") {
    const Mat x = {{1, 4}, {3, 2}, {5, 0}};  // the values of Section 9.4's example
    const std::vector<ex_test::Mistake<Mat>> mistakes = {{"dividing each prefix sum by T instead of t + 1", divided_by_T(x)}};
    if (!ex_test::expect_close(ex::prefix_average(x), Mat{{1, 4}, {2, 3}, {3, 2}}, 1e-6, "x = ((1, 4), (3, 2), (5, 0))", mistakes))
        return;
    for (const Mat& small : {Mat{{2.5f, -1.0f, 4.0f}}, Mat{{3.0f}, {-1.0f}, {7.0f}, {0.5f}}}) {  // T = 1; d = 1
        if (!ex_test::expect_close(ex::prefix_average(small), spec::prefix_mean(small), 1e-6, "x " + attn::shape_str(small),
                                   {{"dividing each prefix sum by T instead of t + 1", divided_by_T(small)}}))
            return;
    }
    attn::Rng rng(101);
    for (int trial = 0; trial < 10; ++trial) {  // random shapes against the plain-loop spec; stop at the first failure
        const Mat r = rng.normal_mat(1 + rng.below(20), 1 + rng.below(8));
        if (!ex_test::expect_close(ex::prefix_average(r), spec::prefix_mean(r), 1e-5,
                                   "random trial " + std::to_string(trial) + ", x " + attn::shape_str(r),
                                   {{"dividing each prefix sum by T instead of t + 1", divided_by_T(r)}}))
            break;
    }
}

// Varies: T = 1 (the smallest), 2, 6, 9 against the exact matrix; A @ x against prefix_average for x (9, 3).
TEST_CASE("Exercise 1.2: averaging_matrix — lower-triangular, rows sum to 1", "[ex1.2][sec01]") {
    for (std::size_t T : {6u, 1u, 2u, 9u}) {
        Mat want = xt::zeros<float>({T, T}), every_1_over_T = xt::zeros<float>({T, T});
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i <= t; ++i) want(t, i) = 1.0f / static_cast<float>(t + 1), every_1_over_T(t, i) = 1.0f / static_cast<float>(T);
        if (!ex_test::expect_close(ex::averaging_matrix(T), want, 1e-6, "T = " + std::to_string(T),
                                   {{"the upper triangle (each row averaging the future)", Mat(xt::transpose(want))},
                                    {"1/T in every kept cell (rows that do not sum to 1)", every_1_over_T}}))
            return;
    }
    attn::Rng rng(102);
    const Mat x = rng.normal_mat(9, 3);
    ex_test::expect_close(spec::matmul(ex::averaging_matrix(9), x), spec::prefix_mean(x), 1e-5, "A @ x against prefix_average(x), x (9, 3)");
}

// Varies: T = 1 (nothing to block), 2, 5, 8 against the exact matrix (the last column and the first row,
// where a loop bound slips); the row softmax of T = 5 against the averaging matrix.
TEST_CASE("Exercise 1.3: causal_scores — zeros below, -inf above, softmax gives A", "[ex1.3][sec01]") {
    const float inf = std::numeric_limits<float>::infinity();
    for (std::size_t T : {5u, 1u, 2u, 8u}) {
        Mat want = xt::zeros<float>({T, T}), diagonal_too = xt::zeros<float>({T, T});
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < T; ++i) want(t, i) = i > t ? -inf : 0.0f, diagonal_too(t, i) = i >= t ? -inf : 0.0f;
        if (!ex_test::expect_close(ex::causal_scores(T), want, 0, "T = " + std::to_string(T),
                                   {{"the past blocked instead of the future", Mat(xt::transpose(want))},
                                    {"the diagonal blocked too (a query may read its own token)", diagonal_too}}))
            return;
    }
    // Softmax of each row gives the averaging matrix: 1/(t+1) on and below the diagonal.
    Mat A = xt::zeros<float>({5, 5});
    for (std::size_t t = 0; t < 5; ++t)
        for (std::size_t i = 0; i <= t; ++i) A(t, i) = 1.0f / static_cast<float>(t + 1);
    ex_test::expect_close(spec::softmax_rows(ex::causal_scores(5)), A, 1e-6, "the row softmax of causal_scores(5)");
}

// Properties over the contracts' whole domain (tests/exercises/property.hpp): T from 0 (an empty x) up, d from
// 0 up, entries up to 10^4 in size, ties; compared with the double-precision oracle. Tolerance 1e-5, relative to
// the mean of |x| over the prefix (fp32 sums of up to 24 rows round within it).
TEST_CASE("Exercise 1.1: prefix_average — property: every T and d, against the double oracle", "[ex1.1][sec01][property]") {
    namespace prop = ex_test::prop;
    prop::check("prefix_average over T 0..24, d 0..6", [](prop::Case& c) {
        const Mat x = prop::mat(prop::size(0, 24), prop::size(0, 6), prop::range({1, 1e4}));
        c.input = "x " + prop::show(x);
        const Mat scale = spec::prefix_mean(Mat(xt::abs(x)));
        return prop::compare("prefix_average", ex::prefix_average(x), spec::prefix_mean(x), 1e-5, c.input,
                             {{"dividing by T instead of t + 1", divided_by_T(x)}}, &scale);
    });
}

TEST_CASE("Exercise 1.2: averaging_matrix — property: every T from 0, against the double oracle", "[ex1.2][sec01][property]") {
    namespace prop = ex_test::prop;
    prop::check("averaging_matrix over T 0..64", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 64);
        c.input = "T = " + std::to_string(T);
        Mat want = xt::zeros<float>({T, T});
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i <= t; ++i) want(t, i) = static_cast<float>(1.0 / static_cast<double>(t + 1));
        return prop::compare("averaging_matrix", ex::averaging_matrix(T), want, 1e-7, c.input);
    });
}

TEST_CASE("Exercise 1.3: causal_scores — property: every T from 0, exactly", "[ex1.3][sec01][property]") {
    namespace prop = ex_test::prop;
    prop::check("causal_scores over T 0..64", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 64);
        c.input = "T = " + std::to_string(T);
        Mat want = xt::zeros<float>({T, T});
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = t + 1; i < T; ++i) want(t, i) = -std::numeric_limits<float>::infinity();
        return prop::compare("causal_scores", ex::causal_scores(T), want, 0.0, c.input);
    });
}
