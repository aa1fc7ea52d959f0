// Exercises 8.1–8.3 (Section 9.5, LayerNorm; pre-norm vs post-norm). Built against exercises/ (yours)
// and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>

#include "08_normalization/normalization.hpp"
#include "attn/layers.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;

namespace {
// the library's LayerNorm with gain and bias given as matrices
Mat library_layernorm(const Mat& x, const Mat& gain, const Mat& bias) {
    attn::Parameters p;
    attn::Param& g = p.zeros("gain", 1, x.shape(1));
    attn::Param& b = p.zeros("bias", 1, x.shape(1));
    g.value = gain, b.value = bias;
    attn::LayerNormCache cache;
    return attn::layernorm_forward(x, g, b, cache);
}
}  // namespace

TEST_CASE("Exercise 8.1: layernorm — each row to mean 0, variance 1, then gain and bias", "[ex8.1][sec08]") {
    // one row by hand: (1, 2, 3, 4) has mean 2.5 and biased variance 1.25
    const Mat y = ex::layernorm(Mat{{1.0f, 2.0f, 3.0f, 4.0f}}, Mat{{1.0f, 1.0f, 1.0f, 1.0f}}, Mat{{0.0f, 0.0f, 0.0f, 0.0f}});
    REQUIRE(y.shape() == std::array<std::size_t, 2>{1, 4});
    CHECK(y(0, 0) == Approx(-1.5 / std::sqrt(1.25 + 1e-5)).epsilon(1e-5));
    CHECK(y(0, 3) == Approx(1.5 / std::sqrt(1.25 + 1e-5)).epsilon(1e-5));
    // a constant row becomes the bias
    const Mat c = ex::layernorm(Mat{{7.0f, 7.0f, 7.0f}}, Mat{{2.0f, 2.0f, 2.0f}}, Mat{{0.5f, -1.0f, 3.0f}});
    CHECK(c(0, 0) == Approx(0.5));
    CHECK(c(0, 1) == Approx(-1.0));
    CHECK(c(0, 2) == Approx(3.0));
    // random rows at several scales, against the library
    attn::Rng rng(801);
    for (float scale : {0.01f, 1.0f, 100.0f}) {
        const Mat x = rng.normal_mat(6, 16) * scale + 3.0f;
        const Mat gain = rng.normal_mat(1, 16), bias = rng.normal_mat(1, 16);
        INFO("scale " << scale);
        CHECK(attn::max_abs_diff(ex::layernorm(x, gain, bias), library_layernorm(x, gain, bias)) < 1e-4);
    }
}

TEST_CASE("Exercise 8.2: layernorm_backward — the gradient through a LayerNorm", "[ex8.2][sec08]") {
    attn::Rng rng(802);
    const Mat x = rng.normal_mat(5, 12) * 2.0f + 1.0f;
    const Mat gain = rng.normal_mat(1, 12), dy = rng.normal_mat(5, 12);
    const Mat dx = ex::layernorm_backward(x, gain, dy);
    REQUIRE(dx.shape() == x.shape());
    // against the library's backward
    attn::Parameters p;
    attn::Param& g = p.zeros("gain", 1, 12);
    attn::Param& b = p.zeros("bias", 1, 12);
    g.value = gain;
    attn::LayerNormCache cache;
    attn::layernorm_forward(x, g, b, cache);
    CHECK(attn::max_abs_diff(dx, attn::layernorm_backward(dy, cache, g, b)) < 1e-4);
    // and against central differences of L = Σ dy ⊙ layernorm(x), in a few entries
    const Mat zero_bias = xt::zeros<float>({std::size_t{1}, std::size_t{12}});
    auto loss = [&](const Mat& xx) { return static_cast<double>(xt::sum(dy * library_layernorm(xx, gain, zero_bias))()); };
    for (auto [r, c] : {std::pair<std::size_t, std::size_t>{0, 0}, {2, 5}, {4, 11}}) {
        Mat xp = x, xm = x;
        const float h = 1e-2f;
        xp(r, c) += h, xm(r, c) -= h;
        const double numeric = (loss(xp) - loss(xm)) / (2 * h);
        INFO("entry (" << r << ", " << c << ")");
        CHECK(dx(r, c) == Approx(numeric).margin(2e-3));
    }
    // a LayerNorm's output ignores shifts of its input, so each row of dx sums to zero
    for (std::size_t r = 0; r < 5; ++r) CHECK(static_cast<double>(xt::sum(xt::row(dx, r))()) == Approx(0.0).margin(1e-4));
}

TEST_CASE("Exercise 8.3: residual_sublayer — pre-norm x + f(LN(x)), post-norm LN(x + f(x))", "[ex8.3][sec08]") {
    attn::Rng rng(803);
    const Mat x = rng.normal_mat(4, 8) * 5.0f + 2.0f;
    const Mat ones = xt::ones<float>({std::size_t{1}, std::size_t{8}}), zeros = xt::zeros<float>({std::size_t{1}, std::size_t{8}});
    const std::function<Mat(const Mat&)> f = [&](const Mat& a) { return Mat(xt::tanh(a) + 0.5f); };
    const std::function<Mat(const Mat&)> norm = [&](const Mat& a) { return library_layernorm(a, ones, zeros); };
    const Mat pre = ex::residual_sublayer(x, f, norm, attn::Norm::pre), post = ex::residual_sublayer(x, f, norm, attn::Norm::post);
    REQUIRE(pre.shape() == x.shape());
    REQUIRE(post.shape() == x.shape());
    CHECK(attn::max_abs_diff(pre, Mat(x + f(norm(x)))) < 1e-5);
    CHECK(attn::max_abs_diff(post, norm(Mat(x + f(x)))) < 1e-5);
    // post-norm's rows have mean 0 whatever comes in; pre-norm keeps the residual stream's scale
    for (std::size_t r = 0; r < 4; ++r) {
        CHECK(static_cast<double>(xt::mean(xt::row(post, r))()) == Approx(0.0).margin(1e-5));
        CHECK(std::fabs(static_cast<double>(xt::mean(xt::row(pre, r))())) > 0.5);
    }
}
