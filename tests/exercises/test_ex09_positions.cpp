// Exercises 9.1–9.3 (Section 9.6). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>

#include "09_positions/positions.hpp"
#include "attn/matmul.hpp"
#include "attn/positions.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;

TEST_CASE("Exercise 9.1: sinusoidal_table — sin and cos of i / 10000^(2t/d)", "[ex9.1][sec09]") {
    const Mat p = ex::sinusoidal_table(50, 16);
    REQUIRE(p.shape() == std::array<std::size_t, 2>{50, 16});
    CHECK(p(0, 0) == Approx(0.0).margin(1e-7));
    CHECK(p(0, 1) == Approx(1.0));
    CHECK(p(7, 6) == Approx(std::sin(7.0 / std::pow(10000.0, 6.0 / 16))).margin(1e-6));
    CHECK(attn::max_abs_diff(p, attn::sinusoidal_table(50, 16)) < 1e-6);
}

TEST_CASE("Exercise 9.2: rope_rotate — rotations whose scores depend on the offset only", "[ex9.2][sec09]") {
    attn::Rng rng(902);
    const Mat x = rng.normal_mat(9, 8);
    const Mat r = ex::rope_rotate(x, 3);
    REQUIRE(r.shape() == x.shape());
    CHECK(attn::max_abs_diff(r, attn::rope(x, 3)) < 1e-5);
    const Mat q = rng.normal_mat(1, 8), k = rng.normal_mat(1, 8);
    auto score = [&](std::size_t t, std::size_t i) { return attn::matmul_nt(ex::rope_rotate(q, t), ex::rope_rotate(k, i))(0, 0); };
    CHECK(score(10, 7) == Approx(score(3, 0)).margin(1e-4));
}

TEST_CASE("Exercise 9.3: alibi_bias — -m (t - i) below the diagonal, m = 2^(-8j/h)", "[ex9.3][sec09]") {
    const Mat b = ex::alibi_bias(5, 8, 1);
    REQUIRE(b.shape() == std::array<std::size_t, 2>{5, 5});
    CHECK(b(4, 0) == Approx(-2.0));
    CHECK(b(2, 2) == 0.0f);
    CHECK(b(1, 3) == 0.0f);
    CHECK(attn::max_abs_diff(ex::alibi_bias(6, 4, 3), attn::alibi_bias(6, attn::alibi_slopes(4)[2])) < 1e-6);
}
