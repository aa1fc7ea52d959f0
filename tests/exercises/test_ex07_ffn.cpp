// Exercises 7.1–7.3 (Section 9.5, the FFN). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>

#include "07_ffn/ffn.hpp"
#include "attn/layers.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;

TEST_CASE("Exercise 7.1: gelu — x Phi(x)", "[ex7.1][sec07]") {
    const Mat y = ex::gelu(Mat{{-1.0f, 0.0f, 1.0f, 3.0f}});
    REQUIRE(y.shape() == std::array<std::size_t, 2>{1, 4});
    CHECK(y(0, 0) == Approx(-0.158655).epsilon(1e-4));
    CHECK(y(0, 1) == Approx(0.0).margin(1e-7));
    CHECK(y(0, 2) == Approx(0.841345).epsilon(1e-4));
    attn::Rng rng(701);
    const Mat x = rng.normal_mat(5, 9) * 3.0f;
    CHECK(attn::max_abs_diff(ex::gelu(x), attn::gelu_forward(x)) < 1e-5);
}

TEST_CASE("Exercise 7.2: gelu_tanh — GPT-2's approximation", "[ex7.2][sec07]") {
    attn::Rng rng(702);
    const Mat x = rng.normal_mat(4, 11) * 3.0f;
    const Mat y = ex::gelu_tanh(x);
    REQUIRE(y.shape() == x.shape());
    CHECK(attn::max_abs_diff(y, attn::gelu_tanh_forward(x)) < 1e-5);
    CHECK(attn::max_abs_diff(y, attn::gelu_forward(x)) < 1e-3);   // close to the exact one…
    CHECK(attn::max_abs_diff(y, attn::gelu_forward(x)) > 1e-6);   // …but not the same function
}

TEST_CASE("Exercise 7.3: ffn_forward — gelu(x W_1 + b_1) W_2 + b_2, row by row", "[ex7.3][sec07]") {
    attn::Rng rng(703);
    attn::Parameters p;
    attn::Param& w1 = p.normal("W_1", 6, 24, 0.5f, rng);
    attn::Param& b1 = p.normal("b_1", 1, 24, 0.5f, rng);
    attn::Param& w2 = p.normal("W_2", 24, 6, 0.5f, rng);
    attn::Param& b2 = p.normal("b_2", 1, 6, 0.5f, rng);
    const Mat x = rng.normal_mat(5, 6);
    const Mat y = ex::ffn_forward(x, w1.value, b1.value, w2.value, b2.value);
    REQUIRE(y.shape() == x.shape());
    const Mat ref = attn::linear_forward(attn::gelu_forward(attn::linear_forward(x, w1, &b1)), w2, &b2);
    CHECK(attn::max_abs_diff(y, ref) < 1e-4);
}
