// Exercises 2.1–2.3 (Definition 9.1). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>

#include "../spec.hpp"
#include "02_soft_lookup/soft_lookup.hpp"
#include "attn/error.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;
using attn::Vec;
using Catch::Matchers::Contains;

TEST_CASE("Exercise 2.1: stable_softmax — C03's weights, and no overflow", "[ex2.1][sec02]") {
    const Vec w = ex::stable_softmax(Vec{0.0f, std::log(2.0f), std::log(3.0f)});
    REQUIRE(w.size() == 3);
    CHECK(w(0) == Approx(1.0 / 6));
    CHECK(w(1) == Approx(2.0 / 6));
    CHECK(w(2) == Approx(3.0 / 6));
    const Vec big = ex::stable_softmax(Vec{1000.0f, 1001.0f});  // exp(1000) overflows float
    CHECK(big(0) == Approx(0.2689).epsilon(1e-3));
    CHECK(big(1) == Approx(0.7311).epsilon(1e-3));
    attn::Rng rng(201);
    for (int trial = 0; trial < 10; ++trial) {
        const Vec s = rng.normal_vec(1 + rng.below(30)) * 10.0f;
        CHECK(attn::max_abs_diff(ex::stable_softmax(s), spec::softmax(s)) < 1e-6);
    }
}

TEST_CASE("Exercise 2.2: attention_row — Example 9.1 gives (1.203, 1.000)", "[ex2.2][sec02]") {
    const Mat k = {{1, 0}, {0, 1}, {1, 1}}, v = {{1, 0}, {0, 1}, {2, 2}};
    const Vec out = ex::attention_row(Vec{1, 0}, k, v);
    REQUIRE(out.size() == 2);
    CHECK(out(0) == Approx(1.2033).epsilon(1e-3));
    CHECK(out(1) == Approx(1.0).epsilon(1e-4));
    attn::Rng rng(202);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t Tk = 1 + rng.below(10), dk = 1 + rng.below(16), dv = 1 + rng.below(6);
        const Mat q = rng.normal_mat(1, dk), kk = rng.normal_mat(Tk, dk), vv = rng.normal_mat(Tk, dv);
        const Vec mine = ex::attention_row(Vec(xt::row(q, 0)), kk, vv);
        CHECK(attn::max_abs_diff(mine, Vec(xt::row(spec::attention(q, kk, vv), 0))) < 1e-5);
    }
}

TEST_CASE("Exercise 2.3: attention — Definition 9.1 for a matrix of queries, with shape checks", "[ex2.3][sec02]") {
    attn::Rng rng(203);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t Tq = 1 + rng.below(8), Tk = 1 + rng.below(10), dk = 1 + rng.below(16), dv = 1 + rng.below(6);
        const Mat q = rng.normal_mat(Tq, dk), k = rng.normal_mat(Tk, dk), v = rng.normal_mat(Tk, dv);
        const Mat mine = ex::attention(q, k, v);
        REQUIRE(mine.shape() == std::array<std::size_t, 2>{Tq, dv});
        CHECK(attn::max_abs_diff(mine, spec::attention(q, k, v)) < 1e-5);
    }
    const Mat q = xt::zeros<float>({1, 2}), k3 = xt::zeros<float>({3, 3}), v3 = xt::zeros<float>({3, 2});
    CHECK_THROWS_WITH(ex::attention(q, k3, v3), Contains("(1, 2)") && Contains("(3, 3)"));
    const Mat k2 = xt::zeros<float>({3, 2}), v4 = xt::zeros<float>({4, 2});
    CHECK_THROWS_WITH(ex::attention(q, k2, v4), Contains("(3, 2)") && Contains("(4, 2)"));
}
