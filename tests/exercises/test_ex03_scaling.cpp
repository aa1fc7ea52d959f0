// Exercises 3.1–3.3 (Section 9.2). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "../spec.hpp"
#include "expect.hpp"
#include "03_scaling/scaling.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;
using attn::Vec;

TEST_CASE("Exercise 3.1: score_variance — Var(q.k) ≈ d for N(0, 1) entries", "[ex3.1][sec03]") {
    const Mat q = {{1, 0}, {0, 1}, {1, 1}}, k = {{1, 0}, {0, 1}, {2, 2}};  // dots 1, 1, 4: mean 2, var 2
    if (!ex_test::expect_close(ex::score_variance(q, k), 2.0, 1e-9, "dots (1, 1, 4)",
                               {{"dividing by n − 1 instead of n", 3.0}, {"the mean of the squares, without subtracting the mean", 6.0},
                                {"the standard deviation instead of the variance", std::sqrt(2.0)}}))
        return;
    attn::Rng rng(301);
    const Mat a = rng.normal_mat(20000, 64), b = rng.normal_mat(20000, 64);
    CHECK(ex::score_variance(a, b) == Approx(64).epsilon(0.05));  // Proposition 9.1 (sd ≈ 1 %)
}

TEST_CASE("Exercise 3.2: entropy — ln 64 for uniform, 0 for one-hot, 0 ln 0 = 0", "[ex3.2][sec03]") {
    const Vec uniform = xt::ones<float>({64}) / 64.0f;
    if (!ex_test::expect_close(ex::entropy(uniform), std::log(64.0), 1e-5, "64 equal weights",
                               {{"log base 2 instead of the natural log", 6.0}, {"a missing minus sign", -std::log(64.0)}}))
        return;
    CHECK(ex::entropy(Vec{0.0f, 1.0f, 0.0f}) == Approx(0.0).margin(1e-12));
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

TEST_CASE("Exercise 3.3: softmax_jacobian — p_i (δ_ij − p_j), checked by finite differences", "[ex3.3][sec03]") {
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
