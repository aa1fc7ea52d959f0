// Exercises 3.1–3.3 (Section 9.2). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "03_scaling/scaling.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "math/stats.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Mat;
using attn::Vec;

// Varies: the hand example (n 3, d 2); one pair (n = 1: variance 0); dot products that cancel (1e8 + 1 − 1e8),
// which float accumulation loses; random pairs of unequal q and k, n and d unlike the example, against a plain
// double loop; Proposition 9.1 at n 20000, d 64; the errors for q and k of different n, of different d, and of
// no pair.
TEST_CASE("Exercise 3.1: score_variance — Var(q.k) ≈ d for N(0, 1) entries", "[ex3.1][sec03]") {
    const Mat q = {{1, 0}, {0, 1}, {1, 1}}, k = {{1, 0}, {0, 1}, {2, 2}};  // dots 1, 1, 4: mean 2, var 2
    if (!ex_test::expect_close(ex::score_variance(q, k), 2.0, 1e-9, "dots (1, 1, 4)",
                               {{"dividing by n − 1 instead of n", 3.0}, {"the mean of the squares, without subtracting the mean", 6.0},
                                {"the standard deviation instead of the variance", std::sqrt(2.0)}}))
        return;
    if (!ex_test::expect_close(ex::score_variance(Mat{{1.5f, -2.0f, 4.0f}}, Mat{{3.0f, 1.0f, -0.5f}}), 0.0, 1e-12, "one pair (n = 1): variance 0"))
        return;
    // pair 0's dot is 1e8 + 1 − 1e8 = 1, pair 1's is 0: variance 0.25. Summed in float, 1e8 + 1 rounds to 1e8.
    const Mat qc = {{1e4f, 1.0f, 1e4f}, {0.0f, 0.0f, 0.0f}}, kc = {{1e4f, 1.0f, -1e4f}, {0.0f, 0.0f, 0.0f}};
    if (!ex_test::expect_close(ex::score_variance(qc, kc), 0.25, 1e-9, "dots (1e8 + 1 − 1e8, 0)",
                               {{"the dot products summed in float (1e8 + 1 rounds to 1e8)", 0.0}}))
        return;
    attn::Rng rng(301);
    for (int trial = 0; trial < 5; ++trial) {  // against a plain double loop
        const std::size_t n = 1 + rng.below(9), d = 1 + rng.below(12);
        const Mat q = rng.normal_mat(n, d), k = rng.normal_mat(n, d) * 2.0f + 1.0f;
        std::vector<double> dots(n);
        double mean = 0, var = 0;
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t c = 0; c < d; ++c) dots[i] += static_cast<double>(q(i, c)) * k(i, c);
            mean += dots[i] / static_cast<double>(n);
        }
        for (double x : dots) var += (x - mean) * (x - mean) / static_cast<double>(n);
        if (!ex_test::expect_close(ex::score_variance(q, k), var, 1e-6, "random trial " + std::to_string(trial) + ", q and k " + attn::shape_str(q)))
            return;
    }
    const Mat a = rng.normal_mat(20000, 64), b = rng.normal_mat(20000, 64);
    CHECK(ex::score_variance(a, b) == Approx(64).epsilon(0.05));  // Proposition 9.1 (sd ≈ 1 %)
    const Mat q3 = rng.normal_mat(3, 4), k2 = rng.normal_mat(2, 4), k5 = rng.normal_mat(3, 5), none = Mat::from_shape({0, 4});
    ex_test::expect_error([&] { (void)ex::score_variance(q3, k2); }, "q (3, 4), k (2, 4): different n", {"(3, 4)", "(2, 4)"});
    ex_test::expect_error([&] { (void)ex::score_variance(q3, k5); }, "q (3, 4), k (3, 5): different d", {"(3, 4)", "(3, 5)"});
    ex_test::expect_error([&] { (void)ex::score_variance(none, none); }, "q and k (0, 4): no pair");
}

// Varies: 64 equal weights; one-hot with the 1 in the middle, first and last; zeros at either end of a row;
// one weight (n = 1); random rows n 1..64 against the library's entropy.
TEST_CASE("Exercise 3.2: entropy — ln 64 for uniform, 0 for one-hot, 0 ln 0 = 0", "[ex3.2][sec03]") {
    const Vec uniform = xt::ones<float>({64}) / 64.0f;
    if (!ex_test::expect_close(ex::entropy(uniform), std::log(64.0), 1e-5, "64 equal weights",
                               {{"log base 2 instead of the natural log", 6.0}, {"a missing minus sign", -std::log(64.0)}}))
        return;
    CHECK(ex::entropy(Vec{0.0f, 1.0f, 0.0f}) == Approx(0.0).margin(1e-12));
    CHECK(ex::entropy(Vec{1.0f}) == Approx(0.0).margin(1e-12));  // n = 1
    // the non-zero weights at either end of the row, where a loop bound slips
    for (const Vec& w : {Vec{0.7f, 0.0f, 0.0f, 0.3f}, Vec{0.5f, 0.25f, 0.25f}, Vec{0.0f, 0.1f, 0.9f}}) {
        double want = 0;
        for (float x : w)
            if (x > 0) want -= static_cast<double>(x) * std::log(static_cast<double>(x));
        if (!ex_test::expect_close(ex::entropy(w), want, 1e-6, "w " + attn::fmt_vec(w, 2))) return;
    }
    const double h = ex::entropy(Vec{0.5f, 0.5f, 0.0f});
    CHECK_FALSE(std::isnan(h));
    CHECK(h == Approx(std::log(2.0)));
    attn::Rng rng(302);
    for (int trial = 0; trial < 5; ++trial) {
        const Vec w = spec::softmax(rng.normal_vec(1 + rng.below(64)) * 4.0f);
        if (!ex_test::expect_close(ex::entropy(w), spec::entropy(w), 1e-5, "random trial " + std::to_string(trial) + ", w " + attn::shape_str(w)))
            break;
    }
}

// Varies: n = 1 (J = (0)); random p of n 2..7 against finite differences, so every row and column, diagonal
// and off-diagonal, is checked.
TEST_CASE("Exercise 3.3: softmax_jacobian — p_i (δ_ij − p_j), checked by finite differences", "[ex3.3][sec03]") {
    if (!ex_test::expect_close(ex::softmax_jacobian(Vec{1.0f}), Mat{{0.0f}}, 1e-7, "p (1) (n = 1)")) return;
    attn::Rng rng(303);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t n = 2 + rng.below(6);
        const Vec s = rng.normal_vec(n);
        const Vec p = spec::softmax(s);
        const Mat numeric = spec::softmax_jacobian_fd(s);
        // Known mistakes: the sign of the whole Jacobian flipped, p_i p_j for p_i (δ_ij − p_j) off the diagonal,
        // and only the diagonal p_i (1 − p_i).
        Mat flipped = -numeric, diagonal_only = xt::zeros<float>({n, n}), plus_off = numeric;
        for (std::size_t i = 0; i < n; ++i) {
            diagonal_only(i, i) = p(i) * (1 - p(i));
            for (std::size_t j = 0; j < n; ++j)
                if (i != j) plus_off(i, j) = p(i) * p(j);
        }
        if (!ex_test::expect_close(ex::softmax_jacobian(p), numeric, 2e-4,
                                   "trial " + std::to_string(trial) + ", p " + attn::shape_str(p) + " (against finite differences)",
                                   {{"the opposite sign, p_i (p_j − δ_ij)", flipped},
                                    {"+p_i p_j off the diagonal instead of −p_i p_j", plus_off},
                                    {"the diagonal p_i (1 − p_i) alone, zeros elsewhere", diagonal_only}}))
            break;
    }
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;

long double variance_oracle(const Mat& q, const Mat& k) {  // two passes, in long double
    const std::size_t n = q.shape(0);
    std::vector<long double> s(n, 0.0L);
    long double mean = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t c = 0; c < q.shape(1); ++c) s[i] += static_cast<long double>(q(i, c)) * k(i, c);
        mean += s[i];
    }
    mean /= static_cast<long double>(n);
    long double var = 0;
    for (long double x : s) var += (x - mean) * (x - mean);
    return var / static_cast<long double>(n);
}
double variance_in_float(const Mat& q, const Mat& k) {  // the same two passes, summed in float
    const std::size_t n = q.shape(0);
    std::vector<float> s(n, 0.0f);
    float mean = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t c = 0; c < q.shape(1); ++c) s[i] += q(i, c) * k(i, c);
        mean += s[i];
    }
    mean /= static_cast<float>(n);
    float var = 0;
    for (float x : s) var += (x - mean) * (x - mean);
    return var / static_cast<float>(n);
}
}  // namespace

// n from 1, d from 0 to 64, entries around an offset of 0, 100 or 1000 (dot products of ~10^8 whose spread is a
// few thousand: a float sum loses it, the contract's double keeps it), ties; and the errors (shapes that differ,
// n = 0). Within 1e-6 of a long-double oracle, relative above 1.
TEST_CASE("Exercise 3.1: score_variance — property: every shape, ill-conditioned dot products, the errors", "[ex3.1][sec03][property]") {
    prop::check("score_variance over n 0..20, d 0..64, offsets up to 1000", [](prop::Case& c) {
        const int broken = *rc::gen::inRange(0, 6);  // 0..3 fit; 4: the shapes differ; 5: n = 0
        const std::size_t n = broken == 5 ? 0 : prop::size(1, 20), d = prop::size(0, 64);
        const float offset = *rc::gen::element(0.0f, 100.0f, 1000.0f);
        const prop::Range noise = prop::range({1, 10});
        Mat q = prop::mat(n, d, noise) + offset, k = prop::mat(n, d, noise) + offset;
        if (broken == 4) k = prop::mat(n + prop::size(0, 2), d + (*rc::gen::arbitrary<bool>() ? 1 : 0), noise);
        if (broken == 4 && k.shape() == q.shape()) k = prop::mat(n + 1, d, noise);
        c.input = "q " + prop::show(q) + ", k " + prop::show(k);
        if (broken >= 4) return prop::error_expected("score_variance", [&] { (void)ex::score_variance(q, k); }, c.input);
        return prop::compare("score_variance", ex::score_variance(q, k), static_cast<double>(variance_oracle(q, k)), 1e-6, c.input,
                             {{"summing the dot products in float instead of double", variance_in_float(q, k)}});
    });
}

// Probability rows from n = 0 (entropy 0), with zeros, ties and one-hot rows, and entries outside [0, 1] or NaN
// (the error). Within 1e-6 of the double sum over the same float entries.
TEST_CASE("Exercise 3.2: entropy — property: any probability row, zeros, one-hot, the errors", "[ex3.2][sec03][property]") {
    prop::check("entropy over n 0..64, zeros and ties", [](prop::Case& c) {
        const std::size_t n = prop::size(0, 64);
        Vec raw = xt::abs(prop::vec(n, prop::range({1})));  // weights before normalising: zeros and ties among them
        const double total = xt::sum(raw)();
        Vec w = Vec::from_shape({n});
        for (std::size_t i = 0; i < n; ++i) w(i) = total > 0 ? static_cast<float>(raw(i) / total) : 0.0f;
        const int broken = n ? *rc::gen::inRange(0, 5) : 0;  // 0..2 fit; 3: one entry negative, past 1 or NaN
        if (broken >= 3) w(prop::size(0, n - 1)) = *rc::gen::element(-0.25f, -1e-6f, 1.5f, std::numeric_limits<float>::quiet_NaN());
        c.input = "w " + prop::show(w);
        if (broken >= 3) return prop::error_expected("entropy", [&] { (void)ex::entropy(w); }, c.input);
        double h = 0;
        for (float x : w)
            if (x > 0) h -= static_cast<double>(x) * std::log(static_cast<double>(x));
        return prop::compare("entropy", ex::entropy(w), h, 1e-6, c.input);
    });
}

// p = softmax of scores up to ±100 (near one-hot rows among them) and ties, n from 1; within 1e-6 of
// p_i (δ_ij − p_j) in double.
TEST_CASE("Exercise 3.3: softmax_jacobian — property: any softmax row, near one-hot, ties", "[ex3.3][sec03][property]") {
    prop::check("softmax_jacobian over n 1..16", [](prop::Case& c) {
        const Vec p = spec::softmax(prop::vec(prop::size(1, 16), prop::range({1, 10, 100})));
        c.input = "p " + prop::show(p);
        Mat want = Mat::from_shape({p.size(), p.size()});
        for (std::size_t i = 0; i < p.size(); ++i)
            for (std::size_t j = 0; j < p.size(); ++j)
                want(i, j) = static_cast<float>(static_cast<double>(p(i)) * ((i == j ? 1.0 : 0.0) - static_cast<double>(p(j))));
        return prop::compare("softmax_jacobian", ex::softmax_jacobian(p), want, 1e-6, c.input);
    });
}
