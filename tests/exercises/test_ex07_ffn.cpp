// Exercises 7.1–7.3 (Section 9.5, the FFN). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "07_ffn/ffn.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Mat;

namespace {
// f applied to every entry, in double, rounded once to float: the answers and the known mistakes
Mat map(const Mat& x, const std::function<double(double)>& f) {
    Mat y = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) y.data()[i] = static_cast<float>(f(x.data()[i]));
    return y;
}
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); }
double gelu_tanh_with(double x, double k, double c) { return 0.5 * x * (1.0 + std::tanh(k * (x + c * x * x * x))); }
const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
double gelu_tanh(double x) { return gelu_tanh_with(x, sqrt_2_over_pi, 0.044715); }

// x (N, in) W (in, out) + b (1, out), in double
Mat affine(const Mat& x, const Mat& W, const Mat* b) {
    Mat y = Mat::from_shape({x.shape(0), W.shape(1)});
    for (std::size_t i = 0; i < x.shape(0); ++i)
        for (std::size_t j = 0; j < W.shape(1); ++j) {
            double s = b ? (*b)(0, j) : 0.0;
            for (std::size_t p = 0; p < x.shape(1); ++p) s += static_cast<double>(x(i, p)) * W(p, j);
            y(i, j) = static_cast<float>(s);
        }
    return y;
}

// Inputs −5, −4.875, …, 5 in one row: where GELU bends, and where the tanh form's constants show.
Mat grid() {
    Mat x = Mat::from_shape({1, 81});
    for (std::size_t i = 0; i < 81; ++i) x(0, i) = -5.0f + 0.125f * static_cast<float>(i);
    return x;
}
}  // namespace

// Varies: the contract's values (−1, 0, 1, 3) in one row; a grid of 81 inputs from −5 to 5; a random (5, 9)
// matrix of spread 3 (so a loop over rows or columns instead of every entry shows).
TEST_CASE("Exercise 7.1: gelu — the exact GELU", "[ex7.1][sec07]") {
    attn::Rng rng(701);
    const Mat inputs[] = {Mat{{-1.0f, 0.0f, 1.0f, 3.0f}}, grid(), Mat(rng.normal_mat(5, 9) * 3.0f)};
    int trial = 0;
    for (const Mat& x : inputs) {
        // float rounding of x Φ(x) is ~1e-7; GPT-2's tanh form is up to ~5e-4 away
        if (!ex_test::expect_close(ex::gelu(x), map(x, gelu), 1e-6, "trial " + std::to_string(trial++) + ", x " + attn::shape_str(x),
                                   {{"GPT-2's tanh approximation instead of the exact GELU", map(x, gelu_tanh)},
                                    {"erf(x) instead of erf(x / √2)", map(x, [](double v) { return 0.5 * v * (1.0 + std::erf(v)); })},
                                    {"Φ(x) alone, without the factor x", map(x, [](double v) { return 0.5 * (1.0 + std::erf(v / std::numbers::sqrt2)); })},
                                    {"x Φ(x) without the ½ (x (1 + erf(x / √2)))", map(x, [](double v) { return v * (1.0 + std::erf(v / std::numbers::sqrt2)); })}}))
            break;
    }
}

// Varies: the grid of 81 inputs from −5 to 5 in one row; a random (4, 11) matrix of spread 3.
TEST_CASE("Exercise 7.2: gelu_tanh — GPT-2's approximation", "[ex7.2][sec07]") {
    attn::Rng rng(702);
    const Mat inputs[] = {grid(), Mat(rng.normal_mat(4, 11) * 3.0f)};
    int trial = 0;
    for (const Mat& x : inputs) {
        // Against the formula in double. Float rounding stays under 1e-7 here; 0.0447 for 0.044715 moves
        // gelu_tanh(−1.875) by 9e-6, so 1e-6 tells the two constants apart.
        if (!ex_test::expect_close(ex::gelu_tanh(x), map(x, gelu_tanh), 1e-6, "trial " + std::to_string(trial++) + ", x " + attn::shape_str(x),
                                   {{"the constant 0.0447 instead of 0.044715", map(x, [](double v) { return gelu_tanh_with(v, sqrt_2_over_pi, 0.0447); })},
                                    {"the exact GELU (erf) instead of the tanh approximation", map(x, gelu)},
                                    {"√2 / π instead of √(2/π)", map(x, [](double v) { return gelu_tanh_with(v, std::numbers::sqrt2 / std::numbers::pi, 0.044715); })},
                                    {"x² instead of x³ inside the tanh", map(x, [](double v) { return 0.5 * v * (1.0 + std::tanh(sqrt_2_over_pi * (v + 0.044715 * v * v))); })}}))
            break;
    }
}

// Varies: random N 1..6, d 1..8, d_ff 1..24 (d_ff smaller and larger than d), every weight and both biases
// random (non-zero), so each of W_1, b_1, W_2, b_2 and the GELU's place moves the answer.
TEST_CASE("Exercise 7.3: ffn_forward — the position-wise FFN, row by row", "[ex7.3][sec07]") {
    attn::Rng rng(703);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t N = 1 + rng.below(6), d = 1 + rng.below(8), d_ff = 1 + rng.below(24);
        const Mat x = rng.normal_mat(N, d), W_1 = rng.normal_mat(d, d_ff) * 0.5f, b_1 = rng.normal_mat(1, d_ff) * 0.5f;
        const Mat W_2 = rng.normal_mat(d_ff, d) * 0.5f, b_2 = rng.normal_mat(1, d) * 0.5f;
        const Mat h = affine(x, W_1, &b_1);  // (N, d_ff)
        const Mat want = affine(map(h, gelu), W_2, &b_2);
        const std::string context = "trial " + std::to_string(trial) + ", x " + attn::shape_str(x) + ", W_1 " + attn::shape_str(W_1);
        if (!ex_test::expect_close(ex::ffn_forward(x, W_1, b_1, W_2, b_2), want, 1e-4, context,
                                   {{"ReLU in place of GELU", affine(map(h, [](double v) { return std::max(v, 0.0); }), W_2, &b_2)},
                                    {"leaving out b_1", affine(map(affine(x, W_1, nullptr), gelu), W_2, &b_2)},
                                    {"leaving out b_2", affine(map(h, gelu), W_2, nullptr)},
                                    {"a GELU after W_2 as well", map(want, gelu)}}))
            break;
    }
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
// The tolerance is the contracts' own, 1e-6, absolute below 1 and relative above. No input separates a float
// GELU from a double one at it: where 1 + erf(x/√2) cancels (x < −3), float's error is ~1e-7 of an absolute
// value below 1e-5, under the 1e-6 allowed; a float tanh form built from exp overflows past x ≈ 9, and that is
// within these inputs (up to ±100).
namespace {
namespace prop = ex_test::prop;
double tanh_via_exp(double x) {  // tanh(u) = (e^{2u} − 1) / (e^{2u} + 1) in float: inf / inf past u ≈ 44
    const float u = static_cast<float>(sqrt_2_over_pi * (x + 0.044715 * x * x * x)), e = std::exp(2 * u);
    return 0.5 * x * (1.0 + static_cast<double>((e - 1) / (e + 1)));
}
Mat ffn_oracle(const Mat& x, const Mat& W1, const Mat& b1, const Mat& W2, const Mat& b2, bool gelu_after_second = false, bool no_gelu = false,
               bool b1_after_gelu = false) {
    std::vector<double> h(x.shape(0) * W1.shape(1));
    Mat y = Mat::from_shape({x.shape(0), W2.shape(1)});
    for (std::size_t i = 0; i < x.shape(0); ++i) {
        for (std::size_t j = 0; j < W1.shape(1); ++j) {
            double s = b1_after_gelu ? 0.0 : b1(0, j);
            for (std::size_t p = 0; p < x.shape(1); ++p) s += static_cast<double>(x(i, p)) * W1(p, j);
            h[i * W1.shape(1) + j] = (gelu_after_second || no_gelu) ? s : gelu(s) + (b1_after_gelu ? b1(0, j) : 0.0);
        }
        for (std::size_t j = 0; j < W2.shape(1); ++j) {
            double s = b2(0, j);
            for (std::size_t p = 0; p < W1.shape(1); ++p) s += h[i * W1.shape(1) + p] * W2(p, j);
            y(i, j) = static_cast<float>(gelu_after_second ? gelu(s) : s);
        }
    }
    return y;
}
}  // namespace

TEST_CASE("Exercise 7.1: gelu — property: any shape, x up to ±100", "[ex7.1][sec07][property]") {
    prop::check("gelu over (0..4, 0..6), x up to 100", [](prop::Case& c) {
        const Mat x = prop::mat(prop::size(0, 4), prop::size(0, 6), prop::range({1, 5, 10, 100}));
        c.input = "x " + prop::show(x);
        return prop::compare("gelu", ex::gelu(x), map(x, [](double v) { return gelu(v); }), 1e-6, c.input,
                             {{"the tanh approximation (exercise 7.2) instead of erf", map(x, [](double v) { return gelu_tanh(v); })},
                              {"x Φ(x) with Φ(x) = ½ (1 + erf(x)): the √2 left out", map(x, [](double v) { return 0.5 * v * (1 + std::erf(v)); })}});
    });
}

TEST_CASE("Exercise 7.2: gelu_tanh — property: any shape, x up to ±100", "[ex7.2][sec07][property]") {
    prop::check("gelu_tanh over (0..4, 0..6), x up to 100", [](prop::Case& c) {
        const Mat x = prop::mat(prop::size(0, 4), prop::size(0, 6), prop::range({1, 5, 10, 100}));
        c.input = "x " + prop::show(x);
        return prop::compare("gelu_tanh", ex::gelu_tanh(x), map(x, [](double v) { return gelu_tanh(v); }), 1e-6, c.input,
                             {{"the exact erf GELU (exercise 7.1) instead of the tanh form", map(x, [](double v) { return gelu(v); })},
                              {"tanh built from exp in float, which overflows to inf / inf", map(x, tanh_via_exp)},
                              {"0.0447 instead of 0.044715", map(x, [](double v) { return gelu_tanh_with(v, sqrt_2_over_pi, 0.0447); })}});
    });
}

// N from 0, d and d_ff from 1, weights up to 10 and ties; within 1e-5 of the double oracle, relative to the size
// of the sums behind each output.
TEST_CASE("Exercise 7.3: ffn_forward — property: every shape, against the double oracle", "[ex7.3][sec07][property]") {
    prop::check("ffn_forward over N 0..4, d 1..4, d_ff 1..8", [](prop::Case& c) {
        const std::size_t N = prop::size(0, 4), d = prop::size(1, 4), d_ff = prop::size(1, 8);
        const prop::Range r = prop::range({0.1, 1, 10});
        const Mat x = prop::mat(N, d, r), W1 = prop::mat(d, d_ff, r), b1 = prop::mat(1, d_ff, r), W2 = prop::mat(d_ff, d, r), b2 = prop::mat(1, d, r);
        c.input = "x " + prop::show(x) + ", W_1 " + prop::show(W1) + ", b_1 " + prop::show(b1) + ", W_2 " + prop::show(W2) + ", b_2 " + prop::show(b2);
        const Mat a1 = xt::abs(W1), ab1 = xt::abs(b1), a2 = xt::abs(W2), ab2 = xt::abs(b2), ax = xt::abs(x);
        const Mat h_scale = affine(ax, a1, &ab1), scale = affine(h_scale, a2, &ab2);
        return prop::compare("ffn_forward", ex::ffn_forward(x, W1, b1, W2, b2), ffn_oracle(x, W1, b1, W2, b2), 1e-5, c.input,
                             {{"the GELU after the second map instead of between the two", ffn_oracle(x, W1, b1, W2, b2, true)},
                              {"no GELU at all", ffn_oracle(x, W1, b1, W2, b2, false, true)},
                              {"b_1 added after the GELU instead of before it", ffn_oracle(x, W1, b1, W2, b2, false, false, true)}},
                             &scale);
    });
}
