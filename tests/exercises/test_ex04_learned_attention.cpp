// Exercises 4.1–4.3 (Sections 9.1, 9.3). Built against exercises/ (yours) and solutions/ (the answers).
// The backward exercises are checked by central finite differences, like every backward in the library.
#include <catch2/catch.hpp>

#include <cmath>

#include "../spec.hpp"
#include "04_learned_attention/learned_attention.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;
using attn::Vec;

TEST_CASE("Exercise 4.1: qk_scores — (x W_q)(x W_k)^T / sqrt(d_k), not symmetric", "[ex4.1][sec04]") {
    attn::Rng rng(401);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t T = 2 + rng.below(6), d = 1 + rng.below(8), dk = 1 + rng.below(6);
        const Mat x = rng.normal_mat(T, d), wq = rng.normal_mat(d, dk), wk = rng.normal_mat(d, dk);
        const Mat s = ex::qk_scores(x, wq, wk);
        REQUIRE(s.shape() == std::array<std::size_t, 2>{T, T});
        const Mat expected = spec::matmul(spec::matmul(x, wq), spec::transpose(spec::matmul(x, wk))) / std::sqrt(static_cast<float>(dk));
        CHECK(attn::max_abs_diff(s, expected) < 1e-4);
    }
    const Mat x = {{1, 0}, {0, 1}}, wq = {{1, 1}, {0, 0}}, wk = {{0, 0}, {1, 1}};
    const Mat s = ex::qk_scores(x, wq, wk);  // q = (1, 1), (0, 0); k = (0, 0), (1, 1)
    CHECK(s(0, 1) == Approx(2 / std::sqrt(2.0)));
    CHECK(s(1, 0) == Approx(0.0));
}

TEST_CASE("Exercise 4.2: linear_backward — dx, dW, db against finite differences", "[ex4.2][sec04]") {
    attn::Rng rng(402);
    const std::size_t N = 3, in = 4, out = 2;
    const Mat x = rng.normal_mat(N, in), W = rng.normal_mat(in, out), b = rng.normal_mat(1, out), dy = rng.normal_mat(N, out);
    auto loss = [&](const Mat& xx, const Mat& WW, const Mat& bb) {  // L = Σ (x W + b) ⊙ dy, so ∂L/∂y = dy
        const Mat y = spec::matmul(xx, WW);
        double s = 0;
        for (std::size_t i = 0; i < N; ++i)
            for (std::size_t j = 0; j < out; ++j) s += (y(i, j) + bb(0, j)) * dy(i, j);
        return s;
    };
    const ex::LinearGrads g = ex::linear_backward(x, W, dy);
    REQUIRE(g.dx.shape() == x.shape());
    REQUIRE(g.dW.shape() == W.shape());
    REQUIRE(g.db.shape() == b.shape());
    const double h = 1e-2;
    auto numeric = [&](const Mat& m, std::size_t i, std::size_t j, int which) {
        Mat p = m, q = m;
        p(i, j) += static_cast<float>(h), q(i, j) -= static_cast<float>(h);
        if (which == 0) return (loss(p, W, b) - loss(q, W, b)) / (2 * h);
        if (which == 1) return (loss(x, p, b) - loss(x, q, b)) / (2 * h);
        return (loss(x, W, p) - loss(x, W, q)) / (2 * h);
    };
    for (std::size_t i = 0; i < N; ++i)
        for (std::size_t j = 0; j < in; ++j) CHECK(g.dx(i, j) == Approx(numeric(x, i, j, 0)).margin(1e-3));
    for (std::size_t i = 0; i < in; ++i)
        for (std::size_t j = 0; j < out; ++j) CHECK(g.dW(i, j) == Approx(numeric(W, i, j, 1)).margin(1e-3));
    for (std::size_t j = 0; j < out; ++j) CHECK(g.db(0, j) == Approx(numeric(b, 0, j, 2)).margin(1e-3));
}

TEST_CASE("Exercise 4.3: softmax_backward — against finite differences through softmax", "[ex4.3][sec04]") {
    attn::Rng rng(403);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t n = 2 + rng.below(6);
        const Vec s = rng.normal_vec(n), dw = rng.normal_vec(n);
        const Vec ds = ex::softmax_backward(spec::softmax(s), dw);
        REQUIRE(ds.size() == n);
        const double h = 1e-3;
        for (std::size_t j = 0; j < n; ++j) {
            Vec sp = s, sm = s;
            sp(j) += static_cast<float>(h), sm(j) -= static_cast<float>(h);
            double lp = 0, lm = 0;  // L = Σ dw_i w_i
            const Vec wp = spec::softmax(sp), wm = spec::softmax(sm);
            for (std::size_t i = 0; i < n; ++i) lp += dw(i) * wp(i), lm += dw(i) * wm(i);
            CHECK(ds(j) == Approx((lp - lm) / (2 * h)).margin(1e-4));
        }
    }
}
