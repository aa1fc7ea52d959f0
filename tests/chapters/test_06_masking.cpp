// Claims C15–C20 — Section 9.4, "Mặt nạ". Each example's verdict is the program's own criterion
// (chapters/06_masking/claims.cpp); the last test feeds it the chapter's figures and contradicting ones.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "chapters/06_masking/claims.hpp"
#include "chapters/06_masking/masks.hpp"
#include "chapters/06_masking/one_pass.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "fast/model.hpp"
#include "math/attention.hpp"
#include "math/averaging.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"

using namespace attn;
using namespace attn::sec06;  // chapters/06_masking/

TEST_CASE("C15: equal scores — uniform rows unmasked, the averaging matrix causal — outputs (1,4), (2,3), (3,2)", "[claims][C15][sec06]") {
    const Mat equal = xt::zeros<float>({3, 3}), v = {{1, 4}, {3, 2}, {5, 0}};
    const Mask causal = causal_mask(3);
    const AttentionSteps open = attention_from_scores(equal, v), masked = attention_from_scores(equal, v, &causal);
    for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t i = 0; i < 3; ++i) CHECK(open.weights(t, i) == Approx(1.0 / 3));
    CHECK(max_abs_diff(masked.weights, Mat{{1, 0, 0}, {0.5f, 0.5f, 0}, {1.0f / 3, 1.0f / 3, 1.0f / 3}}) < 1e-7);
    CHECK(max_abs_diff(masked.out, Mat{{1, 4}, {2, 3}, {3, 2}}) < 1e-6);
    CHECK(c15_claim(open, masked).verdict == Verdict::agrees);
}

TEST_CASE("C16: masking after softmax leaves a row summing to 1/2 — before gives (1/3, 2/3, 0) and (1/3, 4/3)", "[claims][C16][sec06]") {
    const Mat s = {{0.0f, std::log(2.0f), std::log(3.0f)}}, v = {{1, 0}, {0, 2}, {3, 1}};
    Mat after = softmax_rows(s);
    after(0, 2) = 0.0f;
    CHECK(xt::sum(after)() == Approx(0.5));
    Mask keep = Mask::from_shape({1, 3});
    keep(0, 0) = keep(0, 1) = true, keep(0, 2) = false;
    const AttentionSteps r = attention_from_scores(s, v, &keep);
    CHECK(r.weights(0, 0) == Approx(1.0 / 3));
    CHECK(r.weights(0, 1) == Approx(2.0 / 3));
    CHECK(r.weights(0, 2) == 0.0f);
    CHECK(r.out(0, 0) == Approx(1.0 / 3));
    CHECK(r.out(0, 1) == Approx(4.0 / 3));
    CHECK(c16_claim(xt::row(after, 0), {.weights = xt::row(r.weights, 0), .out = xt::row(r.out, 0)}).verdict == Verdict::agrees);
}

TEST_CASE("C17: v2 = (0, 20) makes the second output 40/3 while the weights stay the same", "[claims][C17][sec06]") {
    const Mat s = {{0.0f, std::log(2.0f), std::log(3.0f)}};
    Mask keep = Mask::from_shape({1, 3});
    keep(0, 0) = keep(0, 1) = true, keep(0, 2) = false;
    const AttentionSteps a = attention_from_scores(s, Mat{{1, 0}, {0, 2}, {3, 1}}, &keep);
    const AttentionSteps b = attention_from_scores(s, Mat{{1, 0}, {0, 20}, {3, 1}}, &keep);
    CHECK(max_abs_diff(a.weights, b.weights) == 0.0);
    CHECK(a.out(0, 1) == Approx(4.0 / 3));
    CHECK(b.out(0, 1) == Approx(40.0 / 3));
    CHECK(c17_claim({.weights = xt::row(a.weights, 0), .out = xt::row(a.out, 0)}, {.weights = xt::row(b.weights, 0), .out = xt::row(b.out, 0)})
              .verdict == Verdict::agrees);
}

TEST_CASE("C18: a fully masked row — NaN under -inf, uniform under -1e9, an error under the library's policy", "[claims][C18][sec06]") {
    const float inf = std::numeric_limits<float>::infinity();
    const Vec naive = naive_softmax(Vec{-inf, -inf, -inf});
    for (float x : naive) CHECK(std::isnan(x));
    const Vec big = softmax(Vec{-1e9f, -1e9f, -1e9f});
    for (float x : big) CHECK(x == Approx(1.0 / 3));
    Mask none = Mask::from_shape({2, 3});
    none.fill(false);
    none(0, 1) = true;
    CHECK_THROWS_WITH(masked_softmax(Mat(xt::zeros<float>({2, 3})), none),
                      "masked_softmax: row 1 of (2, 3) is fully masked (policy: error)");
    CHECK(fully_masked_error() == "masked_softmax: row 0 of (1, 3) is fully masked (policy: error)");
    CHECK(c18_claim({.naive = naive, .big_negative = big, .policy = fully_masked_error()}).verdict == Verdict::agrees);
}

TEST_CASE("C19: conventions, padding with causal, and the off-by-one cells", "[claims][C19][sec06]") {
    const Mask keep = causal_mask(4);
    CHECK(causal_mask_errors(keep).empty());
    // The same matrix read in the other convention blocks exactly what it should keep.
    CHECK(causal_mask_errors(invert(keep)).size() == 16);
    // Padding (the last 2 of 5 are padding) combined with causal.
    const Mask both = mask_and(causal_mask(5), padding_mask(5, 3));
    for (std::size_t t = 0; t < 5; ++t)
        for (std::size_t i = 0; i < 5; ++i) CHECK(both(t, i) == (i <= t && i < 3));
    CHECK(causal_padding_errors(both, {.pad = 2, .first = false}) == 0);
    CHECK(causal_padding_errors(both, {.pad = 2, .first = true}) == 12);  // read as left padding: keys 0 and 1 read, keys 3 and 4 hidden
    CHECK(causal_padding_errors(mask_and(causal_mask(5), left_padding_mask(5, 2)), {.pad = 2, .first = true}) == 0);
    CHECK(causal_padding_errors(causal_mask(5), {.pad = 2, .first = false}) == 3);  // the causal mask alone reads the padding
    // Off by one: the exact cells.
    Mask leak = keep, hide = keep;
    leak(2, 3) = true;
    hide(1, 1) = false;
    CHECK(causal_mask_errors(leak) == std::vector<std::string>{"(2, 3) leaks the next token"});
    CHECK(causal_mask_errors(hide) == std::vector<std::string>{"(1, 1) hides the current token"});
    leak(0, 3) = true;
    CHECK(causal_mask_errors(leak).front() == "(0, 3) leaks a future token");
    // The masks off by one, as the program builds them: every cell they get wrong, the first one named.
    CHECK(causal_mask_errors(off_by_one_mask(4, OffByOne::keeps_next)) ==
          std::vector<std::string>{"(0, 1) leaks the next token", "(1, 2) leaks the next token", "(2, 3) leaks the next token"});
    CHECK(causal_mask_errors(off_by_one_mask(4, OffByOne::drops_current)).size() == 4);
    CHECK(causal_mask_errors(off_by_one_mask(4, OffByOne::drops_current)).front() == "(0, 0) hides the current token");
    // Left padding leaves the first query with nothing to read: the policy refuses it.
    CHECK_THROWS_WITH(masked_softmax(Mat(xt::zeros<float>({4, 4})), mask_and(keep, left_padding_mask(4, 1))),
                      "masked_softmax: row 0 of (4, 4) is fully masked (policy: error)");
}

TEST_CASE("C20: one causal pass gives T predictions — changing tokens after t leaves outputs <= t bit-identical", "[claims][C20][sec06]") {
    for (std::size_t heads : {1u, 2u}) {
        const std::size_t T = 7, V = 11;
        fast::Model model({.vocab = V, .max_T = T, .d_model = 8, .n_heads = heads, .d_ff = 16, .norm = heads == 2 ? Norm::pre : Norm::none}, 3);
        Rng rng(4);
        std::vector<int> tokens(T), targets(T, -1);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        targets[0] = 1;
        model.forward(tokens, targets, 1, T);
        const Mat base = model.logits();
        for (std::size_t t = 0; t + 1 < T; ++t) {
            std::vector<int> changed = tokens;
            for (std::size_t i = t + 1; i < T; ++i) changed[i] = static_cast<int>((changed[i] + 1) % V);
            model.forward(changed, targets, 1, T);
            INFO("t = " << t << ", heads " << heads);
            CHECK(std::memcmp(base.data(), model.logits().data(), (t + 1) * V * sizeof(float)) == 0);
            CHECK(max_abs_diff(base, model.logits()) > 0);  // later outputs did change: the test can fail
        }
    }
    // A batch of two sequences: changing the second leaves the first bit-identical.
    const std::size_t T = 5, V = 9;
    fast::Model model({.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .d_ff = 16, .norm = Norm::pre}, 5);
    std::vector<int> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 0, 1}, targets(10, -1);
    targets[0] = 1;
    model.forward(tokens, targets, 2, T);
    const Mat base = model.logits();
    tokens[7] = 2;
    model.forward(tokens, targets, 2, T);
    CHECK(std::memcmp(base.data(), model.logits().data(), (T + 2) * V * sizeof(float)) == 0);  // all of seq 1, seq 2 up to t = 1
    CHECK(max_abs_diff(base, model.logits()) > 0);
}

TEST_CASE("print_mask: a row of 1 (may read) and . (blocked) per query, a line past T = 16", "[sec06]") {
    std::ostringstream small, large;
    print_mask(small, causal_mask(3), "  ");
    CHECK(small.str() == "   1 . .\n   1 1 .\n   1 1 1\n");
    print_mask(large, causal_mask(17));
    CHECK(large.str() == "    (17 x 17: printed for T <= 16)\n");
}

TEST_CASE("C15-C20's criteria: the chapter's own figures agree, figures that contradict them differ", "[claims][C15][C16][C17][C18][C19][C20][sec06]") {
    // C15: uniform rows unmasked, the averaging matrix causal, outputs (1, 4), (2, 3), (3, 2)
    const Mat uniform = xt::ones<float>({3, 3}) / 3.0f, averaging = {{1, 0, 0}, {0.5f, 0.5f, 0}, {1.0f / 3, 1.0f / 3, 1.0f / 3}};
    const Mat chapter_out = {{1, 4}, {2, 3}, {3, 2}};
    auto steps = [](const Mat& weights, const Mat& out) { return AttentionSteps{.scores = {}, .scaled = {}, .weights = weights, .out = out}; };
    CHECK(c15_claim(steps(uniform, Mat{{3, 2}, {3, 2}, {3, 2}}), steps(averaging, chapter_out)).verdict == Verdict::agrees);
    CHECK(c15_claim(steps(uniform, Mat{{3, 2}, {3, 2}, {3, 2}}), steps(uniform, Mat{{3, 2}, {3, 2}, {3, 2}})).verdict == Verdict::differs);  // no mask
    CHECK(c15_claim(steps(uniform, {}), steps(averaging, Mat{{1, 4}, {2, 3}, {3, 3}})).verdict == Verdict::differs);  // a wrong output
    CHECK(c15_claim(steps(averaging, {}), steps(averaging, chapter_out)).verdict == Verdict::differs);  // masked without a mask
    CHECK(c15_claim(steps(uniform, {}), steps(uniform, chapter_out)).verdict == Verdict::differs);      // causal weights not causal

    // C16, C17: the chapter's worked row; masked after softmax (its sum 1), and weights that move with the values
    const Vec after = {1.0f / 6, 2.0f / 6, 0};  // softmax(0, ln 2, ln 3) = (1/6, 2/6, 3/6), its third zeroed: sum 1/2
    const MaskedRow before{.weights = {1.0f / 3, 2.0f / 3, 0}, .out = {1.0f / 3, 4.0f / 3}};
    CHECK(c16_claim(after, before).verdict == Verdict::agrees);
    CHECK(c16_claim(Vec{1.0f / 3, 2.0f / 3, 0}, before).verdict == Verdict::differs);  // after softmax, renormalised: sums to 1
    CHECK(c16_claim(after, {.weights = {1.0f / 6, 2.0f / 6, 3.0f / 6}, .out = {11.0f / 6, 7.0f / 6}}).verdict == Verdict::differs);  // not masked
    CHECK(c16_claim(after, {.weights = {1.0f / 6, 2.0f / 6, 3.0f / 6}, .out = before.out}).verdict == Verdict::differs);  // weights alone wrong
    CHECK(c16_claim(after, {.weights = before.weights, .out = {11.0f / 6, 7.0f / 6}}).verdict == Verdict::differs);      // output alone wrong
    const MaskedRow swapped{.weights = before.weights, .out = {1.0f / 3, 40.0f / 3}};
    CHECK(c17_claim(before, swapped).verdict == Verdict::agrees);
    CHECK(c17_claim(before, {.weights = before.weights, .out = {1.0f / 3, 4.0f / 3}}).verdict == Verdict::differs);  // the output ignores v2
    CHECK(c17_claim(before, {.weights = {0.5f, 0.5f, 0}, .out = swapped.out}).verdict == Verdict::differs);            // the weights moved

    // C18: NaN, uniform, an error; a guarded softmax, a constant that is not large enough, a policy that says nothing
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Vec third = {1.0f / 3, 1.0f / 3, 1.0f / 3};
    const std::string policy = "masked_softmax: row 0 of (1, 3) is fully masked (policy: error)";
    CHECK(c18_claim({.naive = {nan, nan, nan}, .big_negative = third, .policy = policy}).verdict == Verdict::agrees);
    CHECK(c18_claim({.naive = {0, 0, 0}, .big_negative = third, .policy = policy}).verdict == Verdict::differs);
    CHECK(c18_claim({.naive = {nan, nan, nan}, .big_negative = {1, 0, 0}, .policy = policy}).verdict == Verdict::differs);
    CHECK(c18_claim({.naive = {nan, nan, nan}, .big_negative = third, .policy = ""}).verdict == Verdict::differs);

    // C19 at T = 6: the program's counts, then each one wrong
    const MaskCells cells{.T = 6,
                          .causal_wrong = 0,
                          .convention_wrong = 36,
                          .combined_wrong = 0,
                          .leaks = causal_mask_errors(off_by_one_mask(6, OffByOne::keeps_next)),
                          .hides = causal_mask_errors(off_by_one_mask(6, OffByOne::drops_current))};
    CHECK(c19_claim(cells).verdict == Verdict::agrees);
    auto with = [&](auto change) {
        MaskCells c = cells;
        change(c);
        return c19_claim(c).verdict;
    };
    CHECK(with([](MaskCells& c) { c.causal_wrong = 1; }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.convention_wrong = 35; }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.combined_wrong = 2; }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.leaks.pop_back(); }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.hides.pop_back(); }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.leaks.clear(); }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.leaks.front() = "(0, 2) leaks a future token"; }) == Verdict::differs);
    CHECK(with([](MaskCells& c) { c.hides.front() = "(1, 0) hides a past token"; }) == Verdict::differs);

    // C20: the program's experiment at T = 5, then a prefix that moved, and later outputs that did not
    std::ostringstream table;
    Rng rng(0);
    CHECK(c20_claim(one_pass_test(table, 5, 0, rng)).verdict == Verdict::agrees);
    CHECK(table.str().find("SOME") == std::string::npos);
    CHECK(c20_claim({.prefix_identical = false, .later_changed = true}).verdict == Verdict::differs);
    CHECK(c20_claim({.prefix_identical = true, .later_changed = false}).verdict == Verdict::differs);
}
