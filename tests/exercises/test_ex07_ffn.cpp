// Exercises 7.1–7.3 (Section 9.5, the FFN). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "07_ffn/ffn.hpp"
#include "attn/rng.hpp"
#include "attn/table.hpp"
#include "expect.hpp"

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
