// Exercises 8.1–8.3 (Section 9.5, LayerNorm; pre-norm vs post-norm). Built against exercises/ (yours)
// and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>
#include <string>

#include "08_normalization/normalization.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "fast/layers.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Mat;

namespace {
// How each row's spread is measured and where eps goes: the answer and the known mistakes.
enum class Var { biased, unbiased, raw_second_moment };
enum class Eps { inside, outside };

// LayerNorm in double: gain ⊙ (x − mean) · rstd + bias, per row
Mat layernorm(const Mat& x, const Mat& gain, const Mat& bias, double eps = 1e-5, Var var_kind = Var::biased, Eps eps_at = Eps::inside) {
    const std::size_t N = x.shape(0), d = x.shape(1);
    Mat y = Mat::from_shape({N, d});
    for (std::size_t r = 0; r < N; ++r) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x(r, j);
        mean /= static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j) {
            const double c = var_kind == Var::raw_second_moment ? x(r, j) : x(r, j) - mean;
            var += c * c;
        }
        var /= static_cast<double>(var_kind == Var::unbiased ? d - 1 : d);
        const double rstd = eps_at == Eps::inside ? 1.0 / std::sqrt(var + eps) : 1.0 / (std::sqrt(var) + eps);
        for (std::size_t j = 0; j < d; ++j) y(r, j) = static_cast<float>(gain(0, j) * (x(r, j) - mean) * rstd + bias(0, j));
    }
    return y;
}

// Which terms of the LayerNorm backward to keep: the answer keeps all three.
struct Terms {
    bool gain = true, mean_g = true, xhat_term = true;
};
// dx = rstd (g − mean(g) − xhat mean(g ⊙ xhat)), g = dy ⊙ gain, per row, in double
Mat layernorm_backward(const Mat& x, const Mat& gain, const Mat& dy, Terms terms = {}, double eps = 1e-5) {
    const std::size_t N = x.shape(0), d = x.shape(1);
    Mat dx = Mat::from_shape({N, d});
    for (std::size_t r = 0; r < N; ++r) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x(r, j);
        mean /= static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j) var += (x(r, j) - mean) * (x(r, j) - mean);
        const double rstd = 1.0 / std::sqrt(var / static_cast<double>(d) + eps);
        auto g = [&](std::size_t j) { return static_cast<double>(dy(r, j)) * (terms.gain ? gain(0, j) : 1.0f); };
        double mean_g = 0, mean_gx = 0;
        for (std::size_t j = 0; j < d; ++j) mean_g += g(j), mean_gx += g(j) * (x(r, j) - mean) * rstd;
        mean_g /= static_cast<double>(d), mean_gx /= static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j)
            dx(r, j) = static_cast<float>(rstd * (g(j) - (terms.mean_g ? mean_g : 0.0) -
                                                   (terms.xhat_term ? (x(r, j) - mean) * rstd * mean_gx : 0.0)));
    }
    return dx;
}

// the library's LayerNorm, for the finite-difference check of the backward
Mat library_layernorm(const Mat& x, const Mat& gain, const Mat& bias) {
    attn::Parameters p;
    attn::Param& g = p.zeros("gain", 1, x.shape(1));
    attn::Param& b = p.zeros("bias", 1, x.shape(1));
    g.value = gain, b.value = bias;
    attn::fast::LayerNormCache cache;
    return attn::fast::layernorm_forward(x, g, b, cache);
}
}  // namespace

// Varies: the hand row (1, 2, 3, 4); a constant row (it becomes the bias); random rows at scales 0.01, 1 and
// 100 around 3, with random gain and bias, N 1..6, d 2..16; eps passed explicitly (0.5 and 1e-3, where a
// hard-coded 1e-5 shows); one column (d = 1: every row becomes the bias); gain and bias each of the wrong
// width, of the wrong number of rows, and transposed.
TEST_CASE("Exercise 8.1: layernorm — each row to mean 0, variance 1, then gain and bias", "[ex8.1][sec08]") {
    // one row by hand: (1, 2, 3, 4) has mean 2.5 and biased variance 1.25; a constant row becomes the bias
    const Mat ones4 = xt::ones<float>({std::size_t{1}, std::size_t{4}}), zeros4 = xt::zeros<float>({std::size_t{1}, std::size_t{4}});
    const Mat hand = {{1.0f, 2.0f, 3.0f, 4.0f}};
    if (!ex_test::expect_close(ex::layernorm(hand, ones4, zeros4), layernorm(hand, ones4, zeros4), 1e-5, "x (1, 2, 3, 4), gain 1, bias 0",
                               {{"dividing the variance by d − 1 instead of d", layernorm(hand, ones4, zeros4, 1e-5, Var::unbiased)},
                                {"E[x²] in place of the variance (the mean not subtracted)", layernorm(hand, ones4, zeros4, 1e-5, Var::raw_second_moment)}}))
        return;
    const Mat constant = {{7.0f, 7.0f, 7.0f}}, gain3 = {{2.0f, 2.0f, 2.0f}}, bias3 = {{0.5f, -1.0f, 3.0f}};
    if (!ex_test::expect_close(ex::layernorm(constant, gain3, bias3), bias3, 1e-5, "a constant row (7, 7, 7): it becomes the bias",
                               {{"leaving out the bias", Mat(xt::zeros<float>({std::size_t{1}, std::size_t{3}}))}}))
        return;
    // random rows at several scales: at 0.01 the variance is 1e-4, where eps's place shows
    attn::Rng rng(801);
    for (float scale : {0.01f, 1.0f, 100.0f}) {
        const std::size_t N = 1 + rng.below(6), d = 2 + rng.below(15);
        const Mat x = rng.normal_mat(N, d) * scale + 3.0f;
        const Mat gain = rng.normal_mat(1, d), bias = rng.normal_mat(1, d);
        if (!ex_test::expect_close(ex::layernorm(x, gain, bias), layernorm(x, gain, bias), 1e-4,
                                   "x " + attn::shape_str(x) + " at scale " + attn::fmt(scale, 2) + " around 3",
                                   {{"dividing the variance by d − 1 instead of d", layernorm(x, gain, bias, 1e-5, Var::unbiased)},
                                    {"leaving out the bias", layernorm(x, gain, Mat(xt::zeros<float>(bias.shape())))},
                                    {"eps outside the square root (1 / (sqrt(var) + eps))", layernorm(x, gain, bias, 1e-5, Var::biased, Eps::outside)},
                                    {"E[x²] in place of the variance (the mean not subtracted)", layernorm(x, gain, bias, 1e-5, Var::raw_second_moment)}}))
            break;
    }
    // eps is an argument: at variance 1e-4 (scale 0.01) eps = 1e-3 and 0.5 move the answer far from eps = 1e-5
    for (float eps : {1e-3f, 0.5f}) {
        const Mat x = rng.normal_mat(3, 5) * 0.01f - 2.0f;
        const Mat gain = rng.normal_mat(1, 5), bias = rng.normal_mat(1, 5);
        if (!ex_test::expect_close(ex::layernorm(x, gain, bias, eps), layernorm(x, gain, bias, eps), 1e-4,
                                   "x " + attn::shape_str(x) + " at scale 0.01, eps = " + attn::fmt(eps, 3),
                                   {{"ignoring the eps argument (1e-5 whatever eps is passed)", layernorm(x, gain, bias, 1e-5)}}))
            return;
    }
    {  // one column: every entry is its row's mean, so each row becomes the bias
        const Mat x = {{3.0f}, {-1.0f}}, gain = {{2.0f}}, bias = {{0.25f}};
        if (!ex_test::expect_close(ex::layernorm(x, gain, bias), Mat{{0.25f}, {0.25f}}, 1e-6, "x (2, 1) (d = 1)")) return;
    }
    // gain and bias must be (1, d): too narrow, too wide, two rows, transposed
    const Mat ones3 = xt::ones<float>({std::size_t{1}, std::size_t{3}}), ones5 = xt::ones<float>({std::size_t{1}, std::size_t{5}});
    const Mat two_rows = xt::ones<float>({std::size_t{2}, std::size_t{4}});
    ex_test::expect_error([&] { (void)ex::layernorm(hand, ones3, zeros4); }, "x (1, 4), gain (1, 3)");
    ex_test::expect_error([&] { (void)ex::layernorm(hand, ones5, zeros4); }, "x (1, 4), gain (1, 5)");
    ex_test::expect_error([&] { (void)ex::layernorm(hand, two_rows, zeros4); }, "x (1, 4), gain (2, 4)");
    ex_test::expect_error([&] { (void)ex::layernorm(hand, ones4, Mat(xt::zeros<float>({std::size_t{4}, std::size_t{1}}))); }, "x (1, 4), bias (4, 1)");
    ex_test::expect_error([&] { (void)ex::layernorm(hand, ones4, ones3); }, "x (1, 4), bias (1, 3)");
    ex_test::expect_error([&] { (void)ex::layernorm(hand, ones4, two_rows); }, "x (1, 4), bias (2, 4)");
    // eps must be a finite number above 0: 0 (a constant row would divide by 0), negative, NaN, infinite
    for (float eps : {0.0f, -1e-5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()})
        ex_test::expect_error([&] { (void)ex::layernorm(hand, ones4, zeros4, eps); }, "x (1, 4), eps = " + std::to_string(eps));
}

// Varies: random N 1..5, d 3..15 with random gain and dy; eps passed explicitly (0.5, where a hard-coded 1e-5
// shows); gain of the wrong width and of two rows; dy with more rows, fewer rows and more columns than x;
// a few entries against central differences of the library's LayerNorm.
TEST_CASE("Exercise 8.2: layernorm_backward — the gradient through a LayerNorm", "[ex8.2][sec08]") {
    attn::Rng rng(802);
    for (int trial = 0; trial < 4; ++trial) {
        const std::size_t N = 1 + rng.below(5), d = 3 + rng.below(13);  // d = 2 would make every gradient 0
        const Mat x = rng.normal_mat(N, d) * 2.0f + 1.0f;
        const Mat gain = rng.normal_mat(1, d), dy = rng.normal_mat(N, d);
        if (!ex_test::expect_close(ex::layernorm_backward(x, gain, dy), layernorm_backward(x, gain, dy), 1e-4,
                                   "trial " + std::to_string(trial) + ", x " + attn::shape_str(x),
                                   {{"leaving out the term through the variance (−xhat · mean(g ⊙ xhat))", layernorm_backward(x, gain, dy, {.xhat_term = false})},
                                    {"leaving out the term through the mean (−mean(g))", layernorm_backward(x, gain, dy, {.mean_g = false})},
                                    {"only the direct path, rstd · g (no term through the mean or the variance)", layernorm_backward(x, gain, dy, {.mean_g = false, .xhat_term = false})},
                                    {"leaving out the gain (g = dy instead of dy ⊙ gain)", layernorm_backward(x, gain, dy, {.gain = false})}}))
            return;
    }
    {  // eps is an argument
        const Mat x = rng.normal_mat(3, 6) * 0.2f + 1.0f, gain = rng.normal_mat(1, 6), dy = rng.normal_mat(3, 6);
        if (!ex_test::expect_close(ex::layernorm_backward(x, gain, dy, 0.5f), layernorm_backward(x, gain, dy, {}, 0.5), 1e-4, "x (3, 6), eps = 0.5",
                                   {{"ignoring the eps argument (1e-5 whatever eps is passed)", layernorm_backward(x, gain, dy)}}))
            return;
    }
    // gain must be (1, d) and dy x's shape
    const auto ones = [](std::size_t r, std::size_t c) { return Mat(xt::ones<float>({r, c})); };
    ex_test::expect_error([&] { (void)ex::layernorm_backward(ones(2, 3), ones(1, 2), ones(2, 3)); }, "x (2, 3), gain (1, 2)");
    ex_test::expect_error([&] { (void)ex::layernorm_backward(ones(2, 3), ones(2, 3), ones(2, 3)); }, "x (2, 3), gain (2, 3)");
    ex_test::expect_error([&] { (void)ex::layernorm_backward(ones(2, 3), ones(1, 3), ones(3, 3)); }, "x (2, 3), dy (3, 3)");
    ex_test::expect_error([&] { (void)ex::layernorm_backward(ones(2, 3), ones(1, 3), ones(1, 3)); }, "x (2, 3), dy (1, 3)");
    ex_test::expect_error([&] { (void)ex::layernorm_backward(ones(2, 3), ones(1, 3), ones(2, 4)); }, "x (2, 3), dy (2, 4)");
    // eps must be a finite number above 0, as in 8.1
    for (float eps : {0.0f, -1e-5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()})
        ex_test::expect_error([&] { (void)ex::layernorm_backward(ones(2, 3), ones(1, 3), ones(2, 3), eps); }, "x (2, 3), eps = " + std::to_string(eps));
    // the formula above against central differences of L = Σ dy ⊙ layernorm(x), in a few entries
    const Mat x = rng.normal_mat(5, 12) * 2.0f + 1.0f;
    const Mat gain = rng.normal_mat(1, 12), dy = rng.normal_mat(5, 12);
    const Mat dx = ex::layernorm_backward(x, gain, dy);
    const Mat zero_bias = xt::zeros<float>({std::size_t{1}, std::size_t{12}});
    auto loss = [&](const Mat& xx) { return static_cast<double>(xt::sum(dy * library_layernorm(xx, gain, zero_bias))()); };
    for (auto [r, c] : {std::pair<std::size_t, std::size_t>{0, 0}, {2, 5}, {4, 11}}) {
        Mat xp = x, xm = x;
        const float h = 1e-2f;
        xp(r, c) += h, xm(r, c) -= h;
        if (!ex_test::expect_close(dx(r, c), (loss(xp) - loss(xm)) / (2 * h), 2e-3,
                                   "dx(" + std::to_string(r) + ", " + std::to_string(c) + ") against central differences, x (5, 12)"))
            break;
    }
}

// Varies: placement pre, post and none, with x (4, 8) of mean 2 and spread 5 (so normalising x or not shows), a
// sub-layer that is not linear and not zero at 0, and the library's LayerNorm.
TEST_CASE("Exercise 8.3: residual_sublayer — the LayerNorm placed before (pre-norm) or after (post-norm)", "[ex8.3][sec08]") {
    attn::Rng rng(803);
    const Mat x = rng.normal_mat(4, 8) * 5.0f + 2.0f;
    const Mat ones = xt::ones<float>({std::size_t{1}, std::size_t{8}}), zeros = xt::zeros<float>({std::size_t{1}, std::size_t{8}});
    const std::function<Mat(const Mat&)> f = [&](const Mat& a) { return Mat(xt::tanh(a) + 0.5f); };
    const std::function<Mat(const Mat&)> norm = [&](const Mat& a) { return library_layernorm(a, ones, zeros); };
    const Mat pre = x + f(norm(x)), post = norm(Mat(x + f(x)));
    if (!ex_test::expect_close(ex::residual_sublayer(x, f, norm, attn::Norm::pre), pre, 1e-5, "pre-norm, x (4, 8)",
                               {{"post-norm where pre-norm was asked (the placements swapped)", post},
                                {"normalising the residual path too (norm(x) + f(norm(x)))", Mat(norm(x) + f(norm(x)))},
                                {"normalising after the sub-layer (x + norm(f(x)))", Mat(x + norm(f(x)))}}))
        return;
    ex_test::expect_close(ex::residual_sublayer(x, f, norm, attn::Norm::post), post, 1e-5, "post-norm, x (4, 8)",
                          {{"pre-norm where post-norm was asked (the placements swapped)", pre},
                           {"the sub-layer fed norm(x) (norm(x + f(norm(x))))", norm(Mat(x + f(norm(x))))},
                           {"no residual (norm(f(x)))", norm(f(x))}});
    // Norm::none: the residual sum, norm never called (a norm to 1000 everywhere shows where it was)
    const std::function<Mat(const Mat&)> to_1000 = [](const Mat& a) { return Mat(xt::zeros_like(a) + 1000.0f); };
    ex_test::expect_close(ex::residual_sublayer(x, f, to_1000, attn::Norm::none), Mat(x + f(x)), 1e-6,
                          "Norm::none, x (4, 8), with a norm that would make everything 1000: x + f(x)",
                          {{"Norm::none treated as post-norm (norm(x + f(x)))", to_1000(Mat(x + f(x)))},
                           {"Norm::none treated as pre-norm (x + f(norm(x)))", Mat(x + f(to_1000(x)))}});
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;
Mat layernorm_in_float(const Mat& x, const Mat& gain, const Mat& bias, float eps) {  // every step in float
    Mat y = Mat::from_shape(x.shape());
    const float d = static_cast<float>(x.shape(1));
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        float mean = 0, var = 0;
        for (std::size_t j = 0; j < x.shape(1); ++j) mean += x(r, j);
        mean /= d;
        for (std::size_t j = 0; j < x.shape(1); ++j) var += (x(r, j) - mean) * (x(r, j) - mean);
        const float rstd = 1.0f / std::sqrt(var / d + eps);
        for (std::size_t j = 0; j < x.shape(1); ++j) y(r, j) = gain(0, j) * (x(r, j) - mean) * rstd + bias(0, j);
    }
    return y;
}
// A LayerNorm's input, its gain, bias and eps, drawn over the contract: rows near 0 or around an offset up to
// 10^4 with differences from 10^-2 up, constant rows among them (coarse grids), eps from 10^-8 to 1.
struct LnCase {
    Mat x, gain, bias;
    float eps;
};
LnCase draw_layernorm() {
    const std::size_t N = prop::size(0, 4), d = prop::size(1, 8);
    const float offset = *rc::gen::element(0.0f, 100.0f, -3000.0f, 10000.0f);
    LnCase c{prop::mat(N, d, prop::range({0.01, 1, 100})) + offset, prop::mat(1, d, prop::range({1, 10})), prop::mat(1, d, prop::range({1, 10})),
             *rc::gen::element(1e-5f, 1e-8f, 1e-3f, 1.0f)};
    return c;
}
}  // namespace

TEST_CASE("Exercise 8.1: layernorm — property: rows far from 0, constant rows, any eps, the errors", "[ex8.1][sec08][property]") {
    prop::check("layernorm over N 0..4, d 1..8, offsets up to 1e4", [](prop::Case& c) {
        LnCase l = draw_layernorm();
        const int broken = *rc::gen::inRange(0, 7);  // 0..3 fit; 4: gain not (1, d); 5: bias not (1, d); 6: eps ≤ 0 or not finite
        if (broken == 4) l.gain = prop::mat(*rc::gen::arbitrary<bool>() ? 2 : 1, l.x.shape(1) + 1, prop::range({1}));
        if (broken == 5) l.bias = prop::mat(1, l.x.shape(1) - 1, prop::range({1}));
        if (broken == 6) l.eps = *rc::gen::element(0.0f, -1e-5f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN());
        c.input = "x " + prop::show(l.x) + ", gain " + prop::show(l.gain) + ", bias " + prop::show(l.bias) + ", eps " + prop::num(l.eps);
        if (broken >= 4) return prop::error_expected("layernorm", [&] { (void)ex::layernorm(l.x, l.gain, l.bias, l.eps); }, c.input);
        return prop::compare("layernorm", ex::layernorm(l.x, l.gain, l.bias, l.eps), layernorm(l.x, l.gain, l.bias, l.eps), 1e-5, c.input,
                             {{"the unbiased variance (÷ d − 1)", layernorm(l.x, l.gain, l.bias, l.eps, Var::unbiased)},
                              {"eps outside the square root", layernorm(l.x, l.gain, l.bias, l.eps, Var::biased, Eps::outside)},
                              {"the mean and variance in float", layernorm_in_float(l.x, l.gain, l.bias, l.eps)}});
    });
}

TEST_CASE("Exercise 8.2: layernorm_backward — property: rows far from 0, any eps, the errors", "[ex8.2][sec08][property]") {
    prop::check("layernorm_backward over N 0..4, d 1..8, offsets up to 1e4", [](prop::Case& c) {
        LnCase l = draw_layernorm();
        Mat dy = prop::mat(l.x.shape(0), l.x.shape(1), prop::range({1, 100}));
        const int broken = *rc::gen::inRange(0, 7);  // 0..3 fit; 4: gain not (1, d); 5: dy of another shape; 6: eps ≤ 0 or not finite
        if (broken == 4) l.gain = prop::mat(1, l.x.shape(1) + 1, prop::range({1}));
        if (broken == 5)  // dy transposed (as many entries, another shape) or with a row more
            dy = l.x.shape(0) != l.x.shape(1) && *rc::gen::arbitrary<bool>() ? prop::mat(l.x.shape(1), l.x.shape(0), prop::range({1}))
                                                                             : prop::mat(l.x.shape(0) + 1, l.x.shape(1), prop::range({1}));
        if (broken == 6) l.eps = *rc::gen::element(0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN());
        c.input = "x " + prop::show(l.x) + ", gain " + prop::show(l.gain) + ", dy " + prop::show(dy) + ", eps " + prop::num(l.eps);
        if (broken >= 4) return prop::error_expected("layernorm_backward", [&] { (void)ex::layernorm_backward(l.x, l.gain, dy, l.eps); }, c.input);
        // each entry's size: rstd · (|g_j| + mean |g| + |xhat_j| · mean |g ⊙ xhat|), g = dy ⊙ gain
        const Mat ones = xt::ones<float>(l.gain.shape()), zero = xt::zeros<float>(l.gain.shape());
        const Mat xhat = layernorm(l.x, ones, zero, l.eps);
        Mat scale = Mat::from_shape(l.x.shape());
        for (std::size_t r = 0; r < l.x.shape(0); ++r) {
            double var = 0, mean = 0, mg = 0, mgx = 0;
            const std::size_t d = l.x.shape(1);
            for (std::size_t j = 0; j < d; ++j) mean += l.x(r, j) / static_cast<double>(d);
            for (std::size_t j = 0; j < d; ++j) var += (l.x(r, j) - mean) * (l.x(r, j) - mean) / static_cast<double>(d);
            const double rstd = 1 / std::sqrt(var + l.eps);
            for (std::size_t j = 0; j < d; ++j) {
                mg += std::fabs(dy(r, j) * l.gain(0, j)) / static_cast<double>(d);
                mgx += std::fabs(dy(r, j) * l.gain(0, j) * xhat(r, j)) / static_cast<double>(d);
            }
            for (std::size_t j = 0; j < d; ++j)
                scale(r, j) = static_cast<float>(rstd * (std::fabs(dy(r, j) * l.gain(0, j)) + mg + std::fabs(xhat(r, j)) * mgx));
        }
        Terms direct;
        direct.mean_g = direct.xhat_term = false;
        Terms no_xhat;
        no_xhat.xhat_term = false;
        return prop::compare("layernorm_backward", ex::layernorm_backward(l.x, l.gain, dy, l.eps), layernorm_backward(l.x, l.gain, dy, {}, l.eps),
                             1e-5, c.input,
                             {{"the direct path alone (rstd · gain ⊙ dy)", layernorm_backward(l.x, l.gain, dy, direct, l.eps)},
                              {"the variance's term (xhat · mean(g ⊙ xhat)) left out", layernorm_backward(l.x, l.gain, dy, no_xhat, l.eps)}},
                             &scale);
    });
}

// x up to 100, f and norm two different entrywise affine maps (so that the three placements differ), each
// placement; none must not call norm. Within 1e-6 (relative above 1) of the composition in double.
TEST_CASE("Exercise 8.3: residual_sublayer — property: each placement, any x", "[ex8.3][sec08][property]") {
    prop::check("residual_sublayer over N 0..4, d 1..6, each placement", [](prop::Case& c) {
        const Mat x = prop::mat(prop::size(0, 4), prop::size(1, 6), prop::range({1, 100}));
        const float fa = *rc::gen::element(2.0f, -0.5f, 3.0f), fb = *rc::gen::element(1.0f, -2.0f), na = *rc::gen::element(0.25f, 4.0f), nb = *rc::gen::element(-1.0f, 5.0f);
        const attn::Norm placement = *rc::gen::element(attn::Norm::pre, attn::Norm::post, attn::Norm::none);
        int norm_calls = 0;
        const auto f = [&](const Mat& a) { return Mat(a * fa + fb); };
        const auto norm = [&](const Mat& a) { ++norm_calls; return Mat(a * na + nb); };
        const char* name = placement == attn::Norm::pre ? "Norm::pre" : placement == attn::Norm::post ? "Norm::post" : "Norm::none";
        c.input = std::string(name) + ", x " + prop::show(x) + ", f(a) = " + prop::num(fa) + " a + " + prop::num(fb) + ", norm(a) = " + prop::num(na) +
                  " a + " + prop::num(nb);
        Mat pre = x, post = x, none = x;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double v = x.data()[i];
            pre.data()[i] = static_cast<float>(v + fa * (na * v + nb) + fb);
            post.data()[i] = static_cast<float>(na * (v + fa * v + fb) + nb);
            none.data()[i] = static_cast<float>(v + fa * v + fb);
        }
        const Mat mine = ex::residual_sublayer(x, f, norm, placement);
        const Mat& want = placement == attn::Norm::pre ? pre : placement == attn::Norm::post ? post : none;
        std::vector<ex_test::Mistake<Mat>> mistakes;
        if (placement != attn::Norm::pre) mistakes.push_back({"pre-norm's x + f(norm(x))", pre});
        if (placement != attn::Norm::post) mistakes.push_back({"post-norm's norm(x + f(x))", post});
        if (placement != attn::Norm::none) mistakes.push_back({"no LayerNorm, x + f(x)", none});
        std::string failure = prop::compare("residual_sublayer", mine, want, 1e-6, c.input, mistakes);
        if (failure.empty() && placement == attn::Norm::none && norm_calls > 0)
            failure = "your residual_sublayer calls norm with Norm::none for " + c.input + "; the contract says norm is not called\n[vi] residual_sublayer của bạn gọi norm với Norm::none, " +
                      c.input + "; hợp đồng nói norm không được gọi";
        return failure;
    });
}
