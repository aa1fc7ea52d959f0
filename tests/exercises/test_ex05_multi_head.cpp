// Exercises 5.1–5.3 (Section 9.3). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <algorithm>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "05_multi_head/multi_head.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "fast/multi_head.hpp"
#include "math/stats.hpp"
#include "property.hpp"

using attn::Mat;

namespace {
// Known mistake: the heads interleaved — head h takes columns h, h + n_heads, h + 2·n_heads, … .
std::vector<Mat> interleaved(const Mat& x, std::size_t n_heads) {
    const std::size_t T = x.shape(0), dh = x.shape(1) / n_heads;
    std::vector<Mat> heads(n_heads, Mat::from_shape({T, dh}));
    for (std::size_t h = 0; h < n_heads; ++h)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < dh; ++j) heads[h](t, j) = x(t, j * n_heads + h);
    return heads;
}
Mat merged_interleaved(const std::vector<Mat>& heads) {
    const std::size_t T = heads[0].shape(0), dh = heads[0].shape(1), n = heads.size();
    Mat x = Mat::from_shape({T, n * dh});
    for (std::size_t h = 0; h < n; ++h)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < dh; ++j) x(t, j * n + h) = heads[h](t, j);
    return x;
}
}  // namespace

// Varies: the worked example ((2, 4), 2 heads); (5, 12) in 1, 3, 4 and 12 heads (d_head 12, 4, 3, 1: d_head
// unlike n_heads); one position (T = 1); the error for d_model not a multiple of n_heads, with more heads
// than features, and with 0 heads.
TEST_CASE("Exercise 5.1: split_heads — slices of the feature axis", "[ex5.1][sec05]") {
    const Mat x = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    attn::Rng rng(501);
    std::vector<std::pair<Mat, std::size_t>> cases = {{x, 2}};
    for (std::size_t h : {1u, 3u, 4u, 12u}) cases.emplace_back(rng.normal_mat(5, 12), h);
    cases.emplace_back(rng.normal_mat(1, 6), 2);  // one position
    for (const auto& [r, h] : cases) {  // against the library's batched split
        const auto mine = ex::split_heads(r, h);
        REQUIRE(mine.size() == h);
        const attn::Tensor3 ref = attn::split_heads(r, 1, r.shape(0), h);
        const auto wrong = interleaved(r, h);
        bool ok = true;
        for (std::size_t i = 0; i < h && ok; ++i)
            ok = ex_test::expect_close(mine[i], Mat(xt::view(ref, i)), 0, "x " + attn::shape_str(r) + ", " + std::to_string(h) + " heads, head " + std::to_string(i),
                                       {{"interleaving the heads (head h taking columns h, h + n_heads, …)", wrong[i]}});
        if (!ok) break;
    }
    ex_test::expect_error([&] { (void)ex::split_heads(x, 3); }, "x " + attn::shape_str(x) + ", 3 heads (d_model not a multiple)");
    ex_test::expect_error([&] { (void)ex::split_heads(x, 8); }, "x " + attn::shape_str(x) + ", 8 heads (more heads than features)");
    ex_test::expect_error([&] { (void)ex::split_heads(x, 0); }, "x " + attn::shape_str(x) + ", 0 heads");
}

// Varies: two heads of (2, 2); 4 heads of (6, 2); 3 heads of (4, 5) (n_heads ≠ d_head ≠ T); one head; one
// position (T = 1).
TEST_CASE("Exercise 5.2: merge_heads — the inverse of split_heads", "[ex5.2][sec05]") {
    const std::vector<Mat> two = {Mat{{1, 2}, {5, 6}}, Mat{{3, 4}, {7, 8}}};
    if (!ex_test::expect_close(ex::merge_heads(two), Mat{{1, 2, 3, 4}, {5, 6, 7, 8}}, 0, "heads ((1, 2), (5, 6)) and ((3, 4), (7, 8))",
                               {{"interleaving the heads' columns", merged_interleaved(two)}}))
        return;
    attn::Rng rng(502);
    const Mat r = rng.normal_mat(6, 8);
    const attn::Tensor3 parts = attn::split_heads(r, 1, 6, 4);
    std::vector<Mat> heads;
    for (std::size_t i = 0; i < 4; ++i) heads.push_back(xt::view(parts, i));
    if (!ex_test::expect_close(ex::merge_heads(heads), r, 0, "4 heads of (6, 2)", {{"interleaving the heads' columns", merged_interleaved(heads)}}))
        return;
    for (const auto& [n, T, dh] : {std::array<std::size_t, 3>{3, 4, 5}, {1, 3, 4}, {4, 1, 3}}) {  // against split_heads's inverse
        const Mat y = rng.normal_mat(T, n * dh);
        const attn::Tensor3 p = attn::split_heads(y, 1, T, n);
        std::vector<Mat> hs;
        for (std::size_t i = 0; i < n; ++i) hs.push_back(xt::view(p, i));
        if (!ex_test::expect_close(ex::merge_heads(hs), y, 0, std::to_string(n) + " heads of " + attn::shape_str(hs[0]),
                                   {{"interleaving the heads' columns", merged_interleaved(hs)}}))
            return;
    }
}

// Varies: d_model 512 with 1..16 heads and no biases; with biases at 768/12, 512/1 and 64/4 (biases included
// and not, for more than one head count); d_model 64 and 6; the error for a head count that does not divide
// d_model (10 and 3, where d_head = 3 would count 370) and for 0 heads.
TEST_CASE("Exercise 5.3: attention_param_count — 4 d² whatever the number of heads", "[ex5.3][sec05]") {
    for (std::size_t h : {1u, 2u, 4u, 8u, 16u})
        if (!ex_test::expect_close(static_cast<double>(ex::attention_param_count(512, h, ex::Biases::none)), 1048576.0, 0,
                                   "d_model 512, " + std::to_string(h) + " heads, no biases",
                                   {{"leaving out W_o (3 d² instead of 4 d²)", 3.0 * 512 * 512},
                                    {"a full d_model × d_model W_q, W_k, W_v per head", 3.0 * 512 * 512 * h + 512.0 * 512}}))
            return;
    ex_test::expect_close(static_cast<double>(ex::attention_param_count(768, 12, ex::Biases::included)), 4.0 * 768 * 768 + 4 * 768, 0,
                          "d_model 768, 12 heads, with biases",
                          {{"three biases (W_o's left out)", 4.0 * 768 * 768 + 3 * 768}, {"a bias per head instead of per matrix", 4.0 * 768 * 768 + 4 * 64}});
    ex_test::expect_close(static_cast<double>(ex::attention_param_count(64, 4, ex::Biases::none)), 16384.0, 0, "d_model 64, 4 heads, no biases");
    ex_test::expect_close(static_cast<double>(ex::attention_param_count(512, 1, ex::Biases::included)), 4.0 * 512 * 512 + 4 * 512, 0,
                          "d_model 512, 1 head, with biases", {{"leaving out the biases", 4.0 * 512 * 512}});
    ex_test::expect_close(static_cast<double>(ex::attention_param_count(64, 4, ex::Biases::included)), 4.0 * 64 * 64 + 4 * 64, 0,
                          "d_model 64, 4 heads, with biases", {{"leaving out the biases", 4.0 * 64 * 64}, {"a bias per head instead of per matrix", 4.0 * 64 * 64 + 4 * 16}});
    ex_test::expect_close(static_cast<double>(ex::attention_param_count(6, 3, ex::Biases::none)), 144.0, 0, "d_model 6, 3 heads, no biases",
                          {{"leaving out W_o (3 d² instead of 4 d²)", 108.0}});
    ex_test::expect_error([] { (void)ex::attention_param_count(10, 3, ex::Biases::none); }, "d_model 10, 3 heads (not a divisor)");
    ex_test::expect_error([] { (void)ex::attention_param_count(10, 0, ex::Biases::included); }, "d_model 10, 0 heads");
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;
}  // namespace

// T from 0, n_heads 1..8 and d_head 1..6, every entry distinct or tied; and the errors: no head, or a d_model
// the heads do not divide. Exact: a split moves numbers, it computes none.
TEST_CASE("Exercise 5.1: split_heads — property: every shape and head count, the errors", "[ex5.1][sec05][property]") {
    prop::check("split_heads over T 0..5, n_heads 0..8, d_head 1..6", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 5), n_heads = prop::size(1, 8), d_head = prop::size(1, 6);
        const int broken = *rc::gen::inRange(0, 6);  // 0..3 fit; 4: n_heads = 0; 5: d_model not divisible
        // a count that does not divide d_model: at least 2 heads, and a remainder 1..n_heads − 1
        const std::size_t heads = broken == 4 ? 0 : broken == 5 ? std::max<std::size_t>(2, n_heads) : n_heads;
        const std::size_t d = broken == 5 ? heads * d_head + prop::size(1, heads - 1) : n_heads * d_head;
        const Mat x = prop::mat(T, d, prop::range({1, 100}));
        c.input = "x " + prop::show(x) + ", n_heads = " + std::to_string(heads);
        if (broken >= 4) return prop::error_expected("split_heads", [&] { (void)ex::split_heads(x, heads); }, c.input);
        const std::vector<Mat> mine = ex::split_heads(x, heads);
        if (mine.size() != heads)
            return "your split_heads gives " + std::to_string(mine.size()) + " heads for " + c.input + "; expected " + std::to_string(heads) +
                   "\n[vi] split_heads của bạn trả về " + std::to_string(mine.size()) + " đầu với " + c.input + "; đúng là " + std::to_string(heads);
        for (std::size_t h = 0; h < heads; ++h) {
            const Mat want = xt::view(x, xt::all(), xt::range(h * d_head, (h + 1) * d_head));
            Mat strided = Mat::from_shape({T, d_head});  // every n_heads-th column, a mistake the hints warn of
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < d_head; ++j) strided(t, j) = x(t, j * heads + h);
            const std::string failure = prop::compare("split_heads (head " + std::to_string(h) + ")", mine[h], want, 0.0, c.input,
                                                      {{"every n_heads-th column instead of a contiguous block", strided}});
            if (!failure.empty()) return failure;
        }
        return std::string();
    });
}

// 1..8 heads of (T, d_head), T from 0; merge_heads(split_heads(x)) == x; and the errors: no head, heads of
// different shapes. Exact.
TEST_CASE("Exercise 5.2: merge_heads — property: every shape, the inverse of 5.1, the errors", "[ex5.2][sec05][property]") {
    prop::check("merge_heads over 0..8 heads, T 0..5, d_head 1..6", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 5), n_heads = prop::size(1, 8), d_head = prop::size(1, 6);
        const int broken = *rc::gen::inRange(0, 6);  // 0..3 fit; 4: no head; 5: one head of another shape
        std::vector<Mat> heads;
        if (broken != 4)
            for (std::size_t h = 0; h < n_heads; ++h) heads.push_back(prop::mat(T, d_head, prop::range({1, 100})));
        if (broken == 5) {
            const bool rows = *rc::gen::arbitrary<bool>();
            heads[prop::size(0, n_heads - 1)] = prop::mat(rows ? T + 1 : T, rows ? d_head : d_head + 1, prop::range({1}));
        }
        c.input = std::to_string(heads.size()) + " heads";
        for (std::size_t h = 0; h < heads.size(); ++h) c.input += (h ? ", " : ": ") + prop::show(heads[h]);
        if (broken >= 4) return prop::error_expected("merge_heads", [&] { (void)ex::merge_heads(heads); }, c.input);
        Mat want = Mat::from_shape({T, n_heads * d_head});
        for (std::size_t h = 0; h < n_heads; ++h) xt::view(want, xt::all(), xt::range(h * d_head, (h + 1) * d_head)) = heads[h];
        return prop::compare("merge_heads", ex::merge_heads(heads), want, 0.0, c.input);
    });
}

// d_model up to 2^30 (4 d_model² up to 2^62: past 2^32 from d_model = 32,768), every n_heads 1..64 that divides
// it, both bias settings; and the errors (n_heads = 0, or one that does not divide d_model). Exact, against
// 4 d² (+ 4 d) in 128-bit integers.
TEST_CASE("Exercise 5.3: attention_param_count — property: widths past 2^32 parameters, the errors", "[ex5.3][sec05][property]") {
    prop::check("attention_param_count over d_model up to 2^30", [](prop::Case& c) {
        const std::size_t n_heads = prop::size(1, 64), d_head = prop::size(1, *rc::gen::element<std::size_t>(8, 1u << 12, (1u << 30) / 64));
        const int broken = *rc::gen::inRange(0, 6);  // 0..3 fit; 4: n_heads = 0; 5: n_heads does not divide d_model
        const std::size_t heads = broken == 4 ? 0 : broken == 5 ? std::max<std::size_t>(2, n_heads) : n_heads;
        const std::size_t d = broken == 5 ? heads * d_head + prop::size(1, heads - 1) : n_heads * d_head;
        const bool biases = *rc::gen::arbitrary<bool>();
        c.input = "d_model = " + std::to_string(d) + ", n_heads = " + std::to_string(heads) + ", " + (biases ? "Biases::included" : "Biases::none");
        const auto call = [&] { return ex::attention_param_count(d, heads, biases ? ex::Biases::included : ex::Biases::none); };
        if (broken >= 4) return prop::error_expected("attention_param_count", call, c.input);
        const prop::u128 dd = d, want = 4 * dd * dd + (biases ? 4 * dd : 0);
        return prop::compare_count("attention_param_count", call(), static_cast<std::size_t>(want), c.input);
    });
}
