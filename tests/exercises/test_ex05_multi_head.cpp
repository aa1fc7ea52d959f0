// Exercises 5.1–5.3 (Section 9.3). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include "05_multi_head/multi_head.hpp"
#include "attn/error.hpp"
#include "attn/multi_head.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using attn::Mat;
using Catch::Matchers::Contains;

TEST_CASE("Exercise 5.1: split_heads — slices of the feature axis", "[ex5.1][sec05]") {
    const Mat x = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    const auto heads = ex::split_heads(x, 2);
    REQUIRE(heads.size() == 2);
    CHECK(attn::max_abs_diff(heads[0], Mat{{1, 2}, {5, 6}}) == 0);
    CHECK(attn::max_abs_diff(heads[1], Mat{{3, 4}, {7, 8}}) == 0);
    attn::Rng rng(501);
    for (std::size_t h : {1u, 3u, 4u}) {  // against the library's batched split, on random data
        const Mat r = rng.normal_mat(5, 12);
        const auto mine = ex::split_heads(r, h);
        const attn::Tensor3 ref = attn::split_heads(r, 1, 5, h);
        REQUIRE(mine.size() == h);
        for (std::size_t i = 0; i < h; ++i) CHECK(attn::max_abs_diff(mine[i], Mat(xt::view(ref, i))) == 0);
    }
    CHECK_THROWS_WITH(ex::split_heads(x, 3), !Contains("not implemented"));
}

TEST_CASE("Exercise 5.2: merge_heads — the inverse of split_heads", "[ex5.2][sec05]") {
    const Mat merged = ex::merge_heads({Mat{{1, 2}, {5, 6}}, Mat{{3, 4}, {7, 8}}});
    CHECK(attn::max_abs_diff(merged, Mat{{1, 2, 3, 4}, {5, 6, 7, 8}}) == 0);
    attn::Rng rng(502);
    const Mat r = rng.normal_mat(6, 8);
    const attn::Tensor3 parts = attn::split_heads(r, 1, 6, 4);
    std::vector<Mat> heads;
    for (std::size_t i = 0; i < 4; ++i) heads.push_back(xt::view(parts, i));
    CHECK(attn::max_abs_diff(ex::merge_heads(heads), r) == 0);
}

TEST_CASE("Exercise 5.3: attention_param_count — 4 d² whatever the number of heads", "[ex5.3][sec05]") {
    for (std::size_t h : {1u, 2u, 4u, 8u, 16u}) CHECK(ex::attention_param_count(512, h, ex::Biases::none) == 1048576u);
    CHECK(ex::attention_param_count(768, 12, ex::Biases::included) == 4u * 768 * 768 + 4 * 768);
    CHECK(ex::attention_param_count(64, 4, ex::Biases::none) == 16384u);
}
