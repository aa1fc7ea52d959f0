// Exercises 4.1–4.3 (Sections 9.1, 9.3). Built against exercises/ (yours) and solutions/ (the answers).
// The backward exercises are checked by central finite differences, like every backward in the library.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "../spec.hpp"
#include "04_learned_attention/learned_attention.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "math/stats.hpp"
#include "property.hpp"

using attn::Mat;
using attn::Vec;

// Varies: random T 1..7, d_model 1..8, d_k 2..7 (so √T, √d_model and √d_k differ), W_q ≠ W_k (scores not
// symmetric); one position (T = 1) and d_model = 1.
TEST_CASE("Exercise 4.1: qk_scores — (x W_q)(x W_k)^T / sqrt(d_k), not symmetric", "[ex4.1][sec04]") {
    attn::Rng rng(401);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t T = trial == 4 ? 1 : 2 + rng.below(6), d = trial == 3 ? 1 : 1 + rng.below(8), dk = 2 + rng.below(6);
        const Mat x = rng.normal_mat(T, d), wq = rng.normal_mat(d, dk), wk = rng.normal_mat(d, dk);
        const Mat q = spec::matmul(x, wq), k = spec::matmul(x, wk);
        const Mat unscaled = spec::matmul(q, spec::transpose(k));
        const float root_dk = std::sqrt(static_cast<float>(dk)), root_d = std::sqrt(static_cast<float>(d));
        if (!ex_test::expect_close(ex::qk_scores(x, wq, wk), Mat(unscaled / root_dk), 1e-4,
                                   "random trial " + std::to_string(trial) + ", x " + attn::shape_str(x) + ", W_q " + attn::shape_str(wq),
                                   {{"leaving out the division by √d_k", unscaled},
                                    {"k qᵀ instead of q kᵀ (the transpose)", Mat(spec::transpose(unscaled) / root_dk)},
                                    {"dividing by √d_model instead of √d_k", Mat(unscaled / root_d)}}))
            break;
    }
}

namespace {
// L = Σ (x W + b) ⊙ dy, so that ∂L/∂y = dy; its gradients by central differences.
struct LinearCase {
    Mat x, W, b, dy;
    double loss(const Mat& xx, const Mat& WW, const Mat& bb) const {
        const Mat y = spec::matmul(xx, WW);
        double s = 0;
        for (std::size_t i = 0; i < y.shape(0); ++i)
            for (std::size_t j = 0; j < y.shape(1); ++j) s += (y(i, j) + bb(0, j)) * dy(i, j);
        return s;
    }
    Mat numeric(int which) const {  // 0: dx, 1: dW, 2: db
        const Mat& m = which == 0 ? x : which == 1 ? W : b;
        Mat g = Mat::from_shape(m.shape());
        const double h = 1e-2;
        for (std::size_t i = 0; i < m.shape(0); ++i)
            for (std::size_t j = 0; j < m.shape(1); ++j) {
                Mat p = m, q = m;
                p(i, j) += static_cast<float>(h), q(i, j) -= static_cast<float>(h);
                const double lp = which == 0 ? loss(p, W, b) : which == 1 ? loss(x, p, b) : loss(x, W, p);
                const double lq = which == 0 ? loss(q, W, b) : which == 1 ? loss(x, q, b) : loss(x, W, q);
                g(i, j) = static_cast<float>((lp - lq) / (2 * h));
            }
        return g;
    }
};
}  // namespace

// Varies: N 3..5, in 4, out 2..4 (N ≠ in ≠ out: a wrong product has the wrong shape); one row (N = 1) and
// one input feature (in = 1); each of dx, dW, db against finite differences.
TEST_CASE("Exercise 4.2: linear_backward — dx, dW, db against finite differences", "[ex4.2][sec04]") {
    attn::Rng rng(402);
    for (int trial = 0; trial < 5; ++trial) {
        // N ≠ in ≠ out: a wrong product has the wrong shape; then one row, and one input feature
        const std::size_t N = trial < 3 ? 3 + trial : trial == 3 ? 1 : 4, in = trial == 4 ? 1 : 4, out = trial < 3 ? 2 + trial : 3;
        const LinearCase c{rng.normal_mat(N, in), rng.normal_mat(in, out), rng.normal_mat(1, out), rng.normal_mat(N, out)};
        const ex::LinearGrads g = ex::linear_backward(c.x, c.W, c.dy);
        const std::string where = "trial " + std::to_string(trial) + ", x " + attn::shape_str(c.x) + ", W " + attn::shape_str(c.W);
        Mat db_mean = c.numeric(2) / static_cast<float>(N);
        if (!ex_test::expect_close(g.dx, c.numeric(0), 1e-3, where + ", dx")) break;
        if (!ex_test::expect_close(g.dW, c.numeric(1), 1e-3, where + ", dW")) break;
        if (!ex_test::expect_close(g.db, c.numeric(2), 1e-3, where + ", db",
                                   {{"the mean of dy over the rows instead of their sum", db_mean}}))
            break;
    }
}

// Varies: one entry (n = 1: ds = 0); random w of n 2..7 and dw against finite differences, every entry
// of ds checked (the dot product Σ dw_i w_i over all of them).
TEST_CASE("Exercise 4.3: softmax_backward — against finite differences through softmax", "[ex4.3][sec04]") {
    attn::Rng rng(403);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t n = 2 + rng.below(6);
        const Vec s = rng.normal_vec(n), dw = rng.normal_vec(n), w = spec::softmax(s);
        Vec numeric = Vec::from_shape({n}), diagonal_only = Vec::from_shape({n});
        const double h = 1e-3;
        for (std::size_t j = 0; j < n; ++j) {
            Vec sp = s, sm = s;
            sp(j) += static_cast<float>(h), sm(j) -= static_cast<float>(h);
            double lp = 0, lm = 0;  // L = Σ dw_i w_i
            const Vec wp = spec::softmax(sp), wm = spec::softmax(sm);
            for (std::size_t i = 0; i < n; ++i) lp += dw(i) * wp(i), lm += dw(i) * wm(i);
            numeric(j) = static_cast<float>((lp - lm) / (2 * h));
            diagonal_only(j) = w(j) * (1 - w(j)) * dw(j);
        }
        if (!ex_test::expect_close(ex::softmax_backward(w, dw), numeric, 1e-4,
                                   "trial " + std::to_string(trial) + ", w " + attn::shape_str(w),
                                   {{"the Jacobian's diagonal alone, w_j (1 − w_j) dw_j", diagonal_only},
                                    {"dw passed through unchanged", dw}}))
            return;
    }
    ex_test::expect_close(ex::softmax_backward(Vec{1.0f}, Vec{2.5f}), Vec{0.0f}, 1e-7, "w (1), dw (2.5) (n = 1)",
                          {{"dw passed through unchanged", Vec{2.5f}}});
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;
Mat abs_of(const Mat& a) { return xt::abs(a); }
}  // namespace

// T from 0, d_model from 0, d_k from 1, entries up to 100 and ties; within 1e-5 of the double oracle, relative
// to the size of the sums behind each score ((|x| |W_q|)(|x| |W_k|)ᵀ / √d_k), which fp32 rounding may miss by.
TEST_CASE("Exercise 4.1: qk_scores — property: every shape, against the double oracle", "[ex4.1][sec04][property]") {
    prop::check("qk_scores over T 0..6, d_model 0..6, d_k 1..5", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 6), d = prop::size(0, 6), dk = prop::size(1, 5);
        const prop::Range r = prop::range({1, 100});
        const Mat x = prop::mat(T, d, r), wq = prop::mat(d, dk, r), wk = prop::mat(d, dk, r);
        c.input = "x " + prop::show(x) + ", W_q " + prop::show(wq) + ", W_k " + prop::show(wk);
        const float root = static_cast<float>(std::sqrt(static_cast<double>(dk)));
        const Mat unscaled = spec::matmul(spec::matmul(x, wq), spec::transpose(spec::matmul(x, wk)));
        const Mat scale = spec::matmul(spec::matmul(abs_of(x), abs_of(wq)), spec::transpose(spec::matmul(abs_of(x), abs_of(wk)))) / root;
        return prop::compare("qk_scores", ex::qk_scores(x, wq, wk), Mat(unscaled / root), 1e-5, c.input,
                             {{"leaving out the division by √d_k", unscaled},
                              {"k qᵀ instead of q kᵀ (the transpose)", Mat(spec::transpose(unscaled) / root)}},
                             &scale);
    });
}

// N, in and out from 0 (empty batches and layers), entries up to 100 and ties; each gradient within 1e-5 of the
// double oracle (dy Wᵀ, xᵀ dy, the column sums of dy), relative to the size of its sums.
TEST_CASE("Exercise 4.2: linear_backward — property: every shape, against the double oracle", "[ex4.2][sec04][property]") {
    prop::check("linear_backward over N 0..6, in 0..6, out 0..6", [](prop::Case& c) {
        const std::size_t N = prop::size(0, 6), in = prop::size(0, 6), out = prop::size(0, 6);
        const prop::Range r = prop::range({1, 100});
        const Mat x = prop::mat(N, in, r), W = prop::mat(in, out, r), dy = prop::mat(N, out, r);
        c.input = "x " + prop::show(x) + ", W " + prop::show(W) + ", dy " + prop::show(dy);
        const ex::LinearGrads g = ex::linear_backward(x, W, dy);
        const Mat ones = xt::ones<float>({std::size_t{1}, N});
        const Mat dx_scale = spec::matmul(abs_of(dy), spec::transpose(abs_of(W))), dW_scale = spec::matmul(spec::transpose(abs_of(x)), abs_of(dy)),
                  db_scale = spec::matmul(ones, abs_of(dy));
        std::string failure = prop::compare("linear_backward's dx", g.dx, spec::matmul(dy, spec::transpose(W)), 1e-5, c.input, {}, &dx_scale);
        if (failure.empty())
            failure = prop::compare("linear_backward's dW", g.dW, spec::matmul(spec::transpose(x), dy), 1e-5, c.input, {}, &dW_scale);
        if (failure.empty()) failure = prop::compare("linear_backward's db", g.db, spec::matmul(ones, dy), 1e-5, c.input, {}, &db_scale);
        return failure;
    });
}

// w = softmax of scores up to ±100 (near one-hot rows, ties), dw up to 10^4 in size, n from 1; within 1e-5 of
// w_j (dw_j − Σ_i dw_i w_i) in double, relative to w_j (|dw_j| + Σ_i |dw_i| w_i).
TEST_CASE("Exercise 4.3: softmax_backward — property: any softmax row and upstream gradient", "[ex4.3][sec04][property]") {
    prop::check("softmax_backward over n 1..16", [](prop::Case& c) {
        const std::size_t n = prop::size(1, 16);
        const Vec w = spec::softmax(prop::vec(n, prop::range({1, 10, 100}))), dw = prop::vec(n, prop::range({1, 100, 1e4}));
        c.input = "w " + prop::show(w) + ", dw " + prop::show(dw);
        double dot = 0, abs_dot = 0;
        for (std::size_t i = 0; i < n; ++i) {
            dot += static_cast<double>(dw(i)) * w(i);
            abs_dot += std::fabs(static_cast<double>(dw(i))) * w(i);
        }
        Vec want = Vec::from_shape({n}), scale = Vec::from_shape({n}), no_dot = Vec::from_shape({n});
        for (std::size_t j = 0; j < n; ++j) {
            want(j) = static_cast<float>(w(j) * (dw(j) - dot));
            scale(j) = static_cast<float>(w(j) * (std::fabs(static_cast<double>(dw(j))) + abs_dot));
            no_dot(j) = w(j) * dw(j);
        }
        return prop::compare("softmax_backward", ex::softmax_backward(w, dw), want, 1e-5, c.input,
                             {{"w ⊙ dw alone: the Σ_i dw_i w_i term left out", no_dot}}, &scale);
    });
}
