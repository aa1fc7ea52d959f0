// Exercises 6.1–6.3 (Section 9.4). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "06_masking/masking.hpp"
#include "core/error.hpp"
#include "expect.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Mask;
using attn::Vec;

namespace {
// The (T, T) mask whose cell (t, i) is keep(t, i): the answer and the known mistakes, for the same T.
Mask mask_of(std::size_t T, const std::function<bool(std::size_t, std::size_t)>& keep) {
    Mask m = Mask::from_shape({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) m(t, i) = keep(t, i);
    return m;
}
// softmax over every score, then the blocked ones set to 0 and not renormalised: the mask applied after
Vec softmax_then_mask(const Vec& s, const std::vector<bool>& keep) {
    double m = -INFINITY, sum = 0;
    for (std::size_t i = 0; i < s.size(); ++i) m = std::max(m, static_cast<double>(s(i)));
    for (std::size_t i = 0; i < s.size(); ++i) sum += std::exp(s(i) - m);
    Vec w = Vec::from_shape({s.size()});
    for (std::size_t i = 0; i < s.size(); ++i) w(i) = keep[i] ? static_cast<float>(std::exp(s(i) - m) / sum) : 0.0f;
    return w;
}
// the kept scores shifted by the max over *every* score, in float: a blocked score far above the kept ones
// makes every kept exp underflow to 0, and 0/0 is NaN
Vec shifted_by_max_of_all(const Vec& s, const std::vector<bool>& keep) {
    float m = -INFINITY, sum = 0;
    for (std::size_t i = 0; i < s.size(); ++i) m = std::max(m, s(i));
    Vec w = xt::zeros<float>({s.size()});
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) sum += (w(i) = std::exp(s(i) - m));
    for (auto& x : w) x /= sum;
    return w;
}
// the kept scores shifted by c, in float, the blocked ones 0, then every entry divided by the sum: the shift by
// the first kept score, or by a max that started at 0 instead of −inf
Vec kept_shifted_by(const Vec& s, const std::vector<bool>& keep, float c) {
    float sum = 0;
    Vec w = xt::zeros<float>({s.size()});
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) sum += (w(i) = std::exp(s(i) - c));
    for (auto& x : w) x /= sum;
    return w;
}
float first_kept(const Vec& s, const std::vector<bool>& keep) {
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) return s(i);
    return 0;
}
float kept_max_from_zero(const Vec& s, const std::vector<bool>& keep) {
    float m = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) m = std::max(m, s(i));
    return m;
}
// the softmax over the kept positions, in double: the answer
Vec kept_softmax(const Vec& s, const std::vector<bool>& keep) {
    double m = -INFINITY, sum = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) m = std::max(m, static_cast<double>(s(i)));
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) sum += std::exp(s(i) - m);
    Vec w = xt::zeros<float>({s.size()});
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keep[i]) w(i) = static_cast<float>(std::exp(s(i) - m) / sum);
    return w;
}
std::string keep_str(const std::vector<bool>& keep) {
    std::string s = "keep (";
    for (std::size_t i = 0; i < keep.size(); ++i) s += (i ? ", " : "") + std::string(keep[i] ? "1" : "0");
    return s + ")";
}
}  // namespace

// Varies: T = 5 and 9 first (where the known mistakes differ from each other), then the edges T = 2, 1 and 0
// (the empty mask); a mistake that an input already passed rules out is not named on a later one.
TEST_CASE("Exercise 6.1: causal_mask — the causal mask, its diagonal kept", "[ex6.1][sec06]") {
    std::vector<std::string> ruled_out;
    for (std::size_t T : {5u, 9u, 2u, 1u, 0u}) {
        const auto mistakes = ex_test::candidates<Mask>(
            {{"blocking the diagonal (i < t)", mask_of(T, [](std::size_t t, std::size_t i) { return i < t; })},
             {"letting one future key through (i <= t + 1)", mask_of(T, [](std::size_t t, std::size_t i) { return i <= t + 1; })},
             {"the transposed mask (i >= t: each query reads the future)", mask_of(T, [](std::size_t t, std::size_t i) { return i >= t; })},
             {"the opposite convention (true = blocked: i > t)", mask_of(T, [](std::size_t t, std::size_t i) { return i > t; })},
             {"keeping every key (t − i >= 0 is always true for unsigned t, i)", mask_of(T, [](std::size_t, std::size_t) { return true; })}},
            ruled_out);
        const Mask want = mask_of(T, [](std::size_t t, std::size_t i) { return i <= t; });
        if (!ex_test::expect_close(ex::causal_mask(T), want, 0, "T = " + std::to_string(T) + " (1 = keep, 0 = block)", mistakes)) break;
        ex_test::rule_out(mistakes, want, 0, ruled_out);
    }
}

// Varies: padding in the middle (6, 4), none (3, 3 and 1, 1), most of it (7, 2), all of it (5, 0), one
// padded key (5, 4), one real token (4, 1); a mistake that an input already passed rules out is not named on a
// later one.
TEST_CASE("Exercise 6.2: causal_padding_mask — causal and not padding", "[ex6.2][sec06]") {
    std::vector<std::string> ruled_out;
    for (auto [T, valid] : {std::pair<std::size_t, std::size_t>{6, 4}, {3, 3}, {7, 2}, {1, 1}, {5, 0}, {5, 4}, {4, 1}}) {
        const std::size_t v = valid;
        const auto mistakes = ex_test::candidates<Mask>({
            {"joining the conditions with \"or\" instead of \"and\"", mask_of(T, [v](std::size_t t, std::size_t i) { return i <= t || i < v; })},
            {"blocking padded queries (rows) instead of padded keys (columns)", mask_of(T, [v](std::size_t t, std::size_t i) { return i <= t && t < v; })},
            {"letting the first padded key through (i <= valid)", mask_of(T, [v](std::size_t t, std::size_t i) { return i <= t && i <= v; })},
            {"blocking the diagonal (i < t)", mask_of(T, [v](std::size_t t, std::size_t i) { return i < t && i < v; })},
            {"letting one future key through (i <= t + 1)", mask_of(T, [v](std::size_t t, std::size_t i) { return i <= t + 1 && i < v; })},
            {"the padding alone, without the causal condition (i < valid)", mask_of(T, [v](std::size_t, std::size_t i) { return i < v; })},
            {"the padding at the front (i >= T − valid) instead of the end", mask_of(T, [T = T, v](std::size_t t, std::size_t i) { return i <= t && i + v >= T; })}},
            ruled_out);
        const Mask want = mask_of(T, [v](std::size_t t, std::size_t i) { return i <= t && i < v; });
        if (!ex_test::expect_close(ex::causal_padding_mask(T, valid), want, 0,
                                   "T = " + std::to_string(T) + ", valid = " + std::to_string(valid) + " (1 = keep, 0 = block)", mistakes))
            break;
        ex_test::rule_out(mistakes, want, 0, ruled_out);
    }
}

// Varies: the worked example; the first position blocked; blocks in the middle; huge kept scores with a
// bigger blocked one; every kept score far below 0; the largest kept score after a smaller kept one; only the
// last position kept; n = 1; errors for every position blocked (n 2 and 1) and for a mask shorter and longer
// than the scores; a kept −inf (weight 0), every kept score −inf, and a kept NaN or +inf (errors).
TEST_CASE("Exercise 6.3: masked_softmax_row — renormalise the kept, refuse a fully masked row", "[ex6.3][sec06]") {
    const std::vector<std::pair<Vec, std::vector<bool>>> cases = {
        {Vec{0.0f, std::log(2.0f), std::log(3.0f)}, {true, true, false}},  // (1/3, 2/3, 0)
        {Vec{3.0f, -2.0f}, {false, true}},                                 // (0, 1)
        {Vec{0.5f, -1.0f, 2.0f, 0.0f, 1.5f}, {true, false, true, true, false}},
        {Vec{1000.0f, 1001.0f, 5000.0f}, {true, true, false}},             // stable, and the blocked 5000 ignored
        {Vec{-1000.0f, -1001.0f, -2000.0f}, {true, true, false}},          // every kept score far below 0
        {Vec{0.0f, 1000.0f, 3.0f}, {true, true, false}},                   // the largest kept score not the first kept
        {Vec{-4.0f, 2.0f, 1000.0f}, {false, false, true}},                 // the last position alone kept
        {Vec{7.0f}, {true}},                                               // n = 1
    };
    for (const auto& [s, keep] : cases) {
        if (!ex_test::expect_close(ex::masked_softmax_row(s, keep), kept_softmax(s, keep), 1e-6,
                                   "scores " + attn::fmt_vec(s, 3) + ", " + keep_str(keep),
                                   {{"applying the mask after the softmax (the kept weights not renormalised)", softmax_then_mask(s, keep)},
                                    {"the shift taken over every score, blocked ones included (the kept exps underflow: 0/0)", shifted_by_max_of_all(s, keep)},
                                    {"the max over the kept scores starting at 0 instead of −inf (the kept exps underflow: 0/0)", kept_shifted_by(s, keep, kept_max_from_zero(s, keep))},
                                    {"shifting by the first kept score instead of the largest (exp overflows to inf)", kept_shifted_by(s, keep, first_kept(s, keep))}}))
            return;
    }
    ex_test::expect_error([] { (void)ex::masked_softmax_row(Vec{1.0f, 2.0f}, {false, false}); }, "scores (1, 2), every position blocked");
    ex_test::expect_error([] { (void)ex::masked_softmax_row(Vec{1.0f, 2.0f}, {true}); }, "two scores, a mask of one");
    ex_test::expect_error([] { (void)ex::masked_softmax_row(Vec{1.0f, 2.0f}, {true, true, true}); }, "two scores, a mask of three");
    ex_test::expect_error([] { (void)ex::masked_softmax_row(Vec{5000.0f}, {false}); }, "one score, blocked");
    // −inf kept counts as blocked; a row whose every kept score is −inf, or a kept NaN or +inf, is an error
    const float inf = std::numeric_limits<float>::infinity();
    ex_test::expect_close(ex::masked_softmax_row(Vec{-inf, 0.0f, std::log(3.0f)}, {true, true, true}), Vec{0.0f, 0.25f, 0.75f}, 1e-6,
                          "scores (−inf, 0, ln 3), all kept: the −inf weighs nothing");
    ex_test::expect_error([&] { (void)ex::masked_softmax_row(Vec{-inf, -inf, 1.0f}, {true, true, false}); }, "scores (−inf, −inf, 1), the two −inf kept");
    ex_test::expect_error([&] { (void)ex::masked_softmax_row(Vec{1.0f, std::nanf("")}, {true, true}); }, "scores (1, NaN), both kept");
    ex_test::expect_error([&] { (void)ex::masked_softmax_row(Vec{1.0f, inf}, {true, true}); }, "scores (1, +inf), both kept");
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;
attn::Mat as_numbers(const Mask& m) {  // 1 where kept, 0 where blocked: a mask compared as numbers
    attn::Mat x = attn::Mat::from_shape(m.shape());
    for (std::size_t i = 0; i < m.size(); ++i) x.data()[i] = m.data()[i] ? 1.0f : 0.0f;
    return x;
}
// −1e9 added to each blocked score, then a stable softmax of every score, in float: what the library's
// "blocked means weight 0" is not
Vec minus_1e9_on_blocked(const Vec& s, const std::vector<bool>& keep) {
    Vec t = s;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!keep[i]) t(i) += -1e9f;
    return kept_shifted_by(t, std::vector<bool>(s.size(), true), *std::max_element(t.begin(), t.end()));
}
}  // namespace

TEST_CASE("Exercise 6.1: causal_mask — property: every T from 0", "[ex6.1][sec06][property]") {
    prop::check("causal_mask over T 0..64", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 64);
        c.input = "T = " + std::to_string(T);
        return prop::compare("causal_mask (1 = kept)", as_numbers(ex::causal_mask(T)),
                             as_numbers(mask_of(T, [](std::size_t t, std::size_t i) { return i <= t; })), 0.0, c.input,
                             {{"the diagonal blocked (i < t)", as_numbers(mask_of(T, [](std::size_t t, std::size_t i) { return i < t; }))},
                              {"the transpose (i >= t: the future kept)", as_numbers(mask_of(T, [](std::size_t t, std::size_t i) { return i >= t; }))}});
    });
}

// T from 0, every valid in 0..T, and the error (valid > T).
TEST_CASE("Exercise 6.2: causal_padding_mask — property: every T and valid, the error", "[ex6.2][sec06][property]") {
    prop::check("causal_padding_mask over T 0..40, valid 0..T + 3", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 40), valid = prop::size(0, T + 3);
        c.input = "T = " + std::to_string(T) + ", valid = " + std::to_string(valid);
        if (valid > T) return prop::error_expected("causal_padding_mask", [&] { (void)ex::causal_padding_mask(T, valid); }, c.input);
        return prop::compare("causal_padding_mask (1 = kept)", as_numbers(ex::causal_padding_mask(T, valid)),
                             as_numbers(mask_of(T, [&](std::size_t t, std::size_t i) { return i <= t && i < valid; })), 0.0, c.input,
                             {{"padded queries blocked too (t < valid)",
                               as_numbers(mask_of(T, [&](std::size_t t, std::size_t i) { return i <= t && t < valid; }))},
                              {"the padding mask alone, without the causal one",
                               as_numbers(mask_of(T, [&](std::size_t, std::size_t i) { return i < valid; }))}});
    });
}

// n from 1; kept scores up to 10^9 in size (the size of a "−1e9" mask) and −inf; blocked scores anything —
// huge, ±inf, NaN; ties; and every error the contract names (nothing kept, every kept score −inf, a kept NaN or
// +inf, keep of another length). Within 1e-6 of the double oracle (absolute: every weight is at most 1).
TEST_CASE("Exercise 6.3: masked_softmax_row — property: any scores and mask, huge and non-finite, the errors", "[ex6.3][sec06][property]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    prop::check("masked_softmax_row over n 1..12", [&](prop::Case& c) {
        const std::size_t n = prop::size(1, 12);
        Vec s = prop::vec(n, prop::range({1, 100, 1e4, 1e9}));
        std::vector<bool> keep(n);
        for (std::size_t i = 0; i < n; ++i) {
            keep[i] = *rc::gen::arbitrary<bool>();
            if (!keep[i] && *rc::gen::arbitrary<bool>()) s(i) = *rc::gen::element(5000.0f, 1e10f, -1e10f, inf, -inf, nan);
            if (keep[i] && *rc::gen::inRange(0, 8) == 0) s(i) = -inf;
        }
        const int broken = *rc::gen::inRange(0, 8);  // 0..4 as drawn; 5: a kept NaN or +inf; 6: keep of another length; 7: none kept
        if (broken == 5) {
            const std::size_t i = prop::size(0, n - 1);
            keep[i] = true;
            s(i) = *rc::gen::element(nan, inf);
        }
        if (broken == 6) keep.resize(*rc::gen::arbitrary<bool>() ? n + 1 : n - 1);
        if (broken == 7) std::fill(keep.begin(), keep.end(), false);
        c.input = "scores " + prop::show(s) + ", keep (";
        for (std::size_t i = 0; i < keep.size(); ++i) c.input += std::string(i ? ", " : "") + (keep[i] ? "true" : "false");
        c.input += ")";
        bool finite_kept = false;
        for (std::size_t i = 0; i < n && keep.size() == n; ++i) finite_kept = finite_kept || (keep[i] && s(i) != -inf);
        if (broken >= 5 || !finite_kept)
            return prop::error_expected("masked_softmax_row", [&] { (void)ex::masked_softmax_row(s, keep); }, c.input);
        return prop::compare("masked_softmax_row", ex::masked_softmax_row(s, keep), spec::softmax(s, keep), 1e-6, c.input,
                             {{"−1e9 added to the blocked scores instead of excluding them", minus_1e9_on_blocked(s, keep)},
                              {"zeroing the blocked weights after a softmax of every score", softmax_then_mask(s, keep)},
                              {"the shift by the largest of every score, blocked ones included", shifted_by_max_of_all(s, keep)}});
    });
}
