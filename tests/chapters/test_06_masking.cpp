// Claims C15–C20 — Section 9.4, "Mặt nạ".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "attn/attention.hpp"
#include "attn/averaging.hpp"
#include "attn/error.hpp"
#include "attn/model.hpp"
#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"
#include "chapters/06_masking/masks.hpp"

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
    // Off by one: the exact cells.
    Mask leak = keep, hide = keep;
    leak(2, 3) = true;
    hide(1, 1) = false;
    CHECK(causal_mask_errors(leak) == std::vector<std::string>{"(2, 3) leaks the next token"});
    CHECK(causal_mask_errors(hide) == std::vector<std::string>{"(1, 1) hides the current token"});
    leak(0, 3) = true;
    CHECK(causal_mask_errors(leak).front() == "(0, 3) leaks a future token");
    // Left padding leaves the first query with nothing to read: the policy refuses it.
    CHECK_THROWS_WITH(masked_softmax(Mat(xt::zeros<float>({4, 4})), mask_and(keep, left_padding_mask(4, 1))),
                      "masked_softmax: row 0 of (4, 4) is fully masked (policy: error)");
}

TEST_CASE("C20: one causal pass gives T predictions — changing tokens after t leaves outputs <= t bit-identical", "[claims][C20][sec06]") {
    for (std::size_t heads : {1u, 2u}) {
        const std::size_t T = 7, V = 11;
        Model model({.vocab = V, .max_T = T, .d_model = 8, .n_heads = heads, .d_ff = 16, .norm = heads == 2 ? Norm::pre : Norm::none}, 3);
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
    Model model({.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .d_ff = 16, .norm = Norm::pre}, 5);
    std::vector<int> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 0, 1}, targets(10, -1);
    targets[0] = 1;
    model.forward(tokens, targets, 2, T);
    const Mat base = model.logits();
    tokens[7] = 2;
    model.forward(tokens, targets, 2, T);
    CHECK(std::memcmp(base.data(), model.logits().data(), (T + 2) * V * sizeof(float)) == 0);  // all of seq 1, seq 2 up to t = 1
    CHECK(max_abs_diff(base, model.logits()) > 0);
}
