// Exercises 6.1–6.3 (Section 9.4). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>

#include "06_masking/masking.hpp"
#include "attn/error.hpp"

using attn::Mask;
using attn::Vec;
using Catch::Matchers::Contains;

TEST_CASE("Exercise 6.1: causal_mask — keep i <= t, the diagonal included", "[ex6.1][sec06]") {
    for (std::size_t T : {1u, 2u, 5u, 9u}) {
        const Mask m = ex::causal_mask(T);
        REQUIRE(m.shape() == std::array<std::size_t, 2>{T, T});
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < T; ++i) {
                INFO("cell (" << t << ", " << i << ") should be " << (i <= t ? "kept" : "blocked"));
                CHECK(m(t, i) == (i <= t));
            }
    }
}

TEST_CASE("Exercise 6.2: causal_padding_mask — causal and not padding", "[ex6.2][sec06]") {
    const Mask m = ex::causal_padding_mask(6, 4);
    REQUIRE(m.shape() == std::array<std::size_t, 2>{6, 6});
    for (std::size_t t = 0; t < 6; ++t)
        for (std::size_t i = 0; i < 6; ++i) {
            INFO("cell (" << t << ", " << i << ")");
            CHECK(m(t, i) == (i <= t && i < 4));
        }
    const Mask no_padding = ex::causal_padding_mask(3, 3);
    CHECK(no_padding(2, 2));
    CHECK_FALSE(no_padding(1, 2));
}

TEST_CASE("Exercise 6.3: masked_softmax_row — renormalise the kept, refuse a fully masked row", "[ex6.3][sec06]") {
    const Vec w = ex::masked_softmax_row(Vec{0.0f, std::log(2.0f), std::log(3.0f)}, {true, true, false});
    REQUIRE(w.size() == 3);
    CHECK(w(0) == Approx(1.0 / 3));
    CHECK(w(1) == Approx(2.0 / 3));
    CHECK(w(2) == 0.0f);
    const Vec big = ex::masked_softmax_row(Vec{1000.0f, 1001.0f, 5000.0f}, {true, true, false});  // stable, and 5000 ignored
    CHECK(big(0) == Approx(0.2689).epsilon(1e-3));
    CHECK(big(2) == 0.0f);
    const Vec one = ex::masked_softmax_row(Vec{3.0f, -2.0f}, {false, true});
    CHECK(one(1) == 1.0f);
    CHECK_THROWS_AS(ex::masked_softmax_row(Vec{1.0f, 2.0f}, {false, false}), attn::Error);
    CHECK_THROWS_WITH(ex::masked_softmax_row(Vec{1.0f, 2.0f}, {false, false}), !Contains("not implemented"));
    CHECK_THROWS_AS(ex::masked_softmax_row(Vec{1.0f, 2.0f}, {true}), attn::Error);
}
