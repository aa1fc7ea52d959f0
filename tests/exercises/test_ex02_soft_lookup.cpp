// Exercises 2.1–2.3 (Definition 9.1). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "02_soft_lookup/soft_lookup.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "math/stats.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Mat;
using attn::Vec;

namespace {
// Known mistakes, computed for the same input.
Vec softmax_shifted_by(const Vec& s, float c) {  // exp(s − c) / Σ exp(s − c) in float, as a learner writes it
    Vec e = Vec::from_shape({s.size()});
    float sum = 0;
    for (std::size_t j = 0; j < s.size(); ++j) sum += (e(j) = std::exp(s(j) - c));
    for (std::size_t j = 0; j < s.size(); ++j) e(j) /= sum;
    return e;
}
Mat unscaled_attention(const Mat& q, const Mat& k, const Mat& v) {  // softmax(q kᵀ) v: the √d_k forgotten
    const float root = std::sqrt(static_cast<float>(q.shape(1)));
    return spec::attention(Mat(q * root), k, v);
}
Mat softmax_over_queries(const Mat& q, const Mat& k, const Mat& v) {  // each column normalised instead of each row
    const float root = std::sqrt(static_cast<float>(q.shape(1)));
    const Mat w = spec::transpose(spec::softmax_rows(spec::transpose(Mat(spec::matmul(q, spec::transpose(k)) / root))));
    return spec::matmul(w, v);
}
}  // namespace

// Varies: the C03 row; huge scores (±1000) with the largest first, last and in the middle, and all of them
// negative; one score (n = 1); random rows n 1..30 of spread ~10; the error for an empty s.
TEST_CASE("Exercise 2.1: stable_softmax — C03's weights, and no overflow", "[ex2.1][sec02]") {
    const Vec s03 = {0.0f, std::log(2.0f), std::log(3.0f)};
    if (!ex_test::expect_close(ex::stable_softmax(s03), Vec{1.0f / 6, 2.0f / 6, 3.0f / 6}, 1e-6, "scores (0, ln 2, ln 3)")) return;
    // Only the largest score works as the shift: with none, the smallest, the first, the mean, or a max that
    // misses the first or the last score, some exp(s − c) overflows (float's exp does past 88.7). Each input
    // tells one of those apart from the others, given the inputs before it: no shift fails the first; on the
    // second it gives what the mean does, so it is no longer a candidate there; the largest score sits first,
    // then last, where a loop that starts at 1 or stops one early misses it.
    std::vector<std::string> ruled_out;  // mistakes an input the learner's code passed would have failed
    for (const Vec& s : {Vec{1000.0f, 1001.0f}, Vec{500.0f, 1000.0f, -1000.0f, 0.0f}, Vec{-1000.0f, -1001.0f},
                         Vec{1000.0f, 0.0f, -5.0f}, Vec{-5.0f, 0.0f, 1000.0f}, Vec{-3.0f}}) {
        const auto max_of = [&s](std::size_t from, std::size_t to) {  // the largest of s[from, to), or 0 if empty
            return from < to ? *std::max_element(s.begin() + static_cast<std::ptrdiff_t>(from), s.begin() + static_cast<std::ptrdiff_t>(to)) : 0.0f;
        };
        const auto mistakes = ex_test::candidates<Vec>(
            {{"subtracting the smallest score (exp overflows to inf)", softmax_shifted_by(s, *std::min_element(s.begin(), s.end()))},
             {"subtracting the first score (exp overflows to inf)", softmax_shifted_by(s, s(0))},
             {"no shift at all (exp overflows to inf)", softmax_shifted_by(s, 0.0f)},
             {"subtracting the mean score (exp overflows to inf)", softmax_shifted_by(s, static_cast<float>(xt::mean(s)()))},
             {"a max that skips the first score (exp overflows to inf)", softmax_shifted_by(s, max_of(1, s.size()))},
             {"a max that skips the last score (exp overflows to inf)", softmax_shifted_by(s, max_of(0, s.size() - 1))}},
            ruled_out);
        const Vec want = spec::softmax(s);
        if (!ex_test::expect_close(ex::stable_softmax(s), want, 1e-6, "scores " + attn::fmt_vec(s, 0), mistakes)) return;
        ex_test::rule_out(mistakes, want, 1e-6, ruled_out);
    }
    attn::Rng rng(201);
    for (int trial = 0; trial < 10; ++trial) {
        const Vec s = rng.normal_vec(1 + rng.below(30)) * 10.0f;
        if (!ex_test::expect_close(ex::stable_softmax(s), spec::softmax(s), 1e-6, "random trial " + std::to_string(trial) + ", s " + attn::shape_str(s)))
            break;
    }
    ex_test::expect_error([] { (void)ex::stable_softmax(Vec::from_shape({0})); }, "an empty s (n = 0)");
}

// Varies: Example 9.1 (T_k 3, d_k = d_v = 2); random T_k 1..10, d_k 1..16, d_v 1..6 (so √d_k, √d_v and
// √T_k differ); one key (T_k = 1).
TEST_CASE("Exercise 2.2: attention_row — Example 9.1 gives (1.203, 1.000)", "[ex2.2][sec02]") {
    const Mat k = {{1, 0}, {0, 1}, {1, 1}}, v = {{1, 0}, {0, 1}, {2, 2}};
    const Mat q91 = {{1, 0}};
    const std::vector<ex_test::Mistake<Vec>> mistakes91 = {
        {"leaving out the division by √d_k", Vec(xt::row(unscaled_attention(q91, k, v), 0))},
        {"dividing by d_k instead of √d_k", Vec(xt::row(spec::attention(Mat(q91 / std::sqrt(2.0f)), k, v), 0))}};
    if (!ex_test::expect_close(ex::attention_row(Vec{1, 0}, k, v), Vec{1.2033f, 1.0f}, 1e-4, "Example 9.1", mistakes91)) return;
    attn::Rng rng(202);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t Tk = 1 + rng.below(10), dk = 1 + rng.below(16), dv = 1 + rng.below(6);
        const Mat q = rng.normal_mat(1, dk), kk = rng.normal_mat(Tk, dk), vv = rng.normal_mat(Tk, dv);
        if (!ex_test::expect_close(ex::attention_row(Vec(xt::row(q, 0)), kk, vv), Vec(xt::row(spec::attention(q, kk, vv), 0)), 1e-5,
                                   "random trial " + std::to_string(trial) + ", q (" + std::to_string(dk) + ",), k " + attn::shape_str(kk) + ", v " + attn::shape_str(vv),
                                   {{"leaving out the division by √d_k", Vec(xt::row(unscaled_attention(q, kk, vv), 0))}}))
            return;
    }
    // one key: its value, whatever the score
    ex_test::expect_close(ex::attention_row(Vec{3, -1, 2}, Mat{{1, 2, 3}}, Mat{{4, -5}}), Vec{4, -5}, 1e-6, "one key, k (1, 3), v (1, 2)");
}

// Varies: random T_q 1..8, T_k 1..10, d_k 1..16, d_v 1..6 (T_q ≠ T_k and d_k ≠ d_v in most trials); one query
// and one key; both shape errors in both directions (q's d_k smaller and larger than k's, v with more and
// fewer rows than k), each message naming both shapes; the result's rows against the matching attention_row.
TEST_CASE("Exercise 2.3: attention — Definition 9.1 for a matrix of queries, with shape checks", "[ex2.3][sec02]") {
    attn::Rng rng(203);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t Tq = 1 + rng.below(8), Tk = 1 + rng.below(10), dk = 1 + rng.below(16), dv = 1 + rng.below(6);
        const Mat q = rng.normal_mat(Tq, dk), k = rng.normal_mat(Tk, dk), v = rng.normal_mat(Tk, dv);
        if (!ex_test::expect_close(ex::attention(q, k, v), spec::attention(q, k, v), 1e-5,
                                   "random trial " + std::to_string(trial) + ", q " + attn::shape_str(q) + ", k " + attn::shape_str(k) + ", v " + attn::shape_str(v),
                                   {{"leaving out the division by √d_k", unscaled_attention(q, k, v)},
                                    {"a softmax over the queries (each column) instead of over the keys (each row)", softmax_over_queries(q, k, v)}}))
            break;
    }
    {  // one query, one key: its value
        const Mat q1 = {{0.5f, -2.0f}}, k1 = {{1.0f, 3.0f}}, v1 = {{7.0f, -1.0f, 0.25f}};
        if (!ex_test::expect_close(ex::attention(q1, k1, v1), v1, 1e-6, "q (1, 2), k (1, 2), v (1, 3)")) return;
    }
    {  // T_q 2, T_k 5, d_k 3, d_v 4: each row of the result is attention_row of that row of q
        attn::Rng rr(2031);
        const Mat q = rr.normal_mat(2, 3), k = rr.normal_mat(5, 3), v = rr.normal_mat(5, 4);
        if (!ex_test::expect_close(ex::attention(q, k, v), spec::attention(q, k, v), 1e-5, "q (2, 3), k (5, 3), v (5, 4)",
                                   {{"leaving out the division by √d_k", unscaled_attention(q, k, v)}}))
            return;
    }
    // the shape errors, each in both directions
    const Mat q = xt::zeros<float>({1, 2}), k3 = xt::zeros<float>({3, 3}), v3 = xt::zeros<float>({3, 2});
    ex_test::expect_error([&] { (void)ex::attention(q, k3, v3); }, "q (1, 2), k (3, 3)", {"(1, 2)", "(3, 3)"});
    const Mat q4 = xt::zeros<float>({3, 4}), k2 = xt::zeros<float>({3, 2}), v2 = xt::zeros<float>({3, 2});
    ex_test::expect_error([&] { (void)ex::attention(q4, k2, v2); }, "q (3, 4), k (3, 2)", {"(3, 4)", "(3, 2)"});
    const Mat v4 = xt::zeros<float>({4, 2});
    ex_test::expect_error([&] { (void)ex::attention(q, k2, v4); }, "k (3, 2), v (4, 2)", {"(3, 2)", "(4, 2)"});
    const Mat k5 = xt::zeros<float>({5, 2});
    ex_test::expect_error([&] { (void)ex::attention(q, k5, v2); }, "k (5, 2), v (3, 2)", {"(5, 2)", "(3, 2)"});
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;

Vec softmax_unshifted(const Vec& s) { return softmax_shifted_by(s, 0.0f); }  // exp(s) / Σ exp(s): overflows past 88.7

// The attention of one row of q, as Definition 9.1 and as two mistakes give it, and the size that fp32 rounding
// of its scores allows: the largest |value| times (1 + the largest Σ_c |q_c k_jc| / √d_k).
struct RowCase {
    Mat q, k, v;  // q (1, d_k)
    std::string input;
};
Mat attention_scale(const Mat& q, const Mat& k, const Mat& v) {
    const Mat qa = xt::abs(q), ka = xt::abs(k);
    const Mat sums = spec::matmul(qa, spec::transpose(ka));  // (T_q, T_k)
    const double root = std::sqrt(static_cast<double>(q.shape(1)));
    Mat scale = Mat::from_shape({q.shape(0), v.shape(1)});
    for (std::size_t t = 0; t < q.shape(0); ++t)
        for (std::size_t c = 0; c < v.shape(1); ++c) {
            double vmax = 0, smax = 0;
            for (std::size_t j = 0; j < k.shape(0); ++j) vmax = std::max(vmax, std::fabs(static_cast<double>(v(j, c))));
            for (std::size_t j = 0; j < k.shape(0); ++j) smax = std::max(smax, sums(t, j) / root);
            scale(t, c) = static_cast<float>(vmax * (1 + smax));
        }
    return scale;
}
Mat attention_unshifted(const Mat& q, const Mat& k, const Mat& v) {  // the weights by exp(s) / Σ exp(s), in float
    const float root = std::sqrt(static_cast<float>(q.shape(1)));
    Mat out = xt::zeros<float>({q.shape(0), v.shape(1)});
    for (std::size_t t = 0; t < q.shape(0); ++t) {
        Vec s = Vec::from_shape({k.shape(0)});
        for (std::size_t j = 0; j < k.shape(0); ++j) {
            double dot = 0;
            for (std::size_t c = 0; c < q.shape(1); ++c) dot += static_cast<double>(q(t, c)) * k(j, c);
            s(j) = static_cast<float>(dot) / root;
        }
        const Vec w = softmax_unshifted(s);
        for (std::size_t j = 0; j < k.shape(0); ++j)
            for (std::size_t c = 0; c < v.shape(1); ++c) out(t, c) += w(j) * v(j, c);
    }
    return out;
}

Mat scaled_by_root_dv(const Mat& q, const Mat& k, const Mat& v) {  // scores divided by √d_v instead of √d_k
    if (v.shape(1) == 0) return spec::attention(q, k, v);
    return spec::attention(Mat(q * static_cast<float>(std::sqrt(static_cast<double>(q.shape(1)) / static_cast<double>(v.shape(1))))), k, v);
}

Mat first_query_for_all(const Mat& q, const Mat& k, const Mat& v) {  // row 0 of q answers every query
    Mat q0 = q;
    for (std::size_t t = 0; t < q.shape(0); ++t) xt::row(q0, static_cast<std::ptrdiff_t>(t)) = xt::row(q, 0);
    return spec::attention(q0, k, v);
}

// q (T_q, d_k), k, v drawn to fit (half the time) or broken in one of the four ways the contract names.
// broken: 0 fits; 1 q's d_k differs from k's; 2 k and v differ in T_k; 3 no key (T_k = 0); 4 d_k = 0.
struct Drawn {
    Mat q, k, v;
    int broken;
};
Drawn draw_qkv(std::size_t T_q) {
    const int pick = *rc::gen::inRange(0, 8);
    const int broken = pick < 4 ? 0 : pick - 3;
    std::size_t d_k = prop::size(1, 6), T_k = prop::size(1, 8);
    const std::size_t d_v = prop::size(0, 4);
    std::size_t d_q = d_k, T_v = T_k;
    if (broken == 1) d_q = d_k + prop::size(1, 3);
    if (broken == 2) T_v = T_k + prop::size(1, 3);
    if (broken == 3) T_k = T_v = 0;
    if (broken == 4) d_k = d_q = 0;
    const prop::Range qk = prop::range({0.1, 1, 10, 1000}), vr = prop::range({1, 100});
    return {prop::mat(T_q, d_q, qk), prop::mat(T_k, d_k, qk), prop::mat(T_v, d_v, vr), broken};
}
}  // namespace

// Scores up to ±10^4 (every exp(s) overflows float past 88.7), ties, n from 1; against the double oracle, within
// 1e-6 (absolute: every weight is below 1).
TEST_CASE("Exercise 2.1: stable_softmax — property: any finite scores, ties, huge ones", "[ex2.1][sec02][property]") {
    prop::check("stable_softmax over n 1..12, scores up to 1e4", [](prop::Case& c) {
        const Vec s = prop::vec(prop::size(1, 12), prop::range({1, 10, 100, 1e4}));
        c.input = "scores " + prop::show(s);
        return prop::compare("stable_softmax", ex::stable_softmax(s), spec::softmax(s), 1e-6, c.input,
                             {{"exp(s) / Σ exp(s) without subtracting the largest score", softmax_unshifted(s)}});
    });
}

// q and k entries up to 1000 (scores up to ~10^6), v up to 100, every shape from one key, and the four errors;
// within 1e-5 of the size fp32 scores allow (attention_scale).
TEST_CASE("Exercise 2.2: attention_row — property: every shape, huge scores, the shape errors", "[ex2.2][sec02][property]") {
    prop::check("attention_row over T_k 0..8, d_k 0..9, d_v 0..4", [](prop::Case& c) {
        const Drawn d = draw_qkv(1);
        const Vec q = xt::row(d.q, 0);
        c.input = "q " + prop::show(q) + ", k " + prop::show(d.k) + ", v " + prop::show(d.v);
        if (d.broken) return prop::error_expected("attention_row", [&] { (void)ex::attention_row(q, d.k, d.v); }, c.input);
        const Mat scale = attention_scale(d.q, d.k, d.v);
        const Vec scale_row = xt::row(scale, 0);
        return prop::compare("attention_row", ex::attention_row(q, d.k, d.v), Vec(xt::row(spec::attention(d.q, d.k, d.v), 0)), 1e-5,
                             c.input,
                             {{"leaving out the division by √d_k", Vec(xt::row(unscaled_attention(d.q, d.k, d.v), 0))},
                              {"dividing by √d_v instead of √d_k", Vec(xt::row(scaled_by_root_dv(d.q, d.k, d.v), 0))},
                              {"exp(s) / Σ exp(s) without subtracting the largest score", Vec(xt::row(attention_unshifted(d.q, d.k, d.v), 0))}},
                             &scale_row);
    });
}

TEST_CASE("Exercise 2.3: attention — property: every shape from T_q = 0, huge scores, the shape errors", "[ex2.3][sec02][property]") {
    prop::check("attention over T_q 0..5, T_k 0..8, d_k 0..9, d_v 0..4", [](prop::Case& c) {
        const Drawn d = draw_qkv(prop::size(0, 5));
        c.input = "q " + prop::show(d.q) + ", k " + prop::show(d.k) + ", v " + prop::show(d.v);
        if (d.broken) return prop::error_expected("attention", [&] { (void)ex::attention(d.q, d.k, d.v); }, c.input);
        const Mat scale = attention_scale(d.q, d.k, d.v);
        return prop::compare("attention", ex::attention(d.q, d.k, d.v), spec::attention(d.q, d.k, d.v), 1e-5, c.input,
                             {{"leaving out the division by √d_k", unscaled_attention(d.q, d.k, d.v)},
                              {"dividing by √d_v instead of √d_k", scaled_by_root_dv(d.q, d.k, d.v)},
                              {"row 0 of q for every query", first_query_for_all(d.q, d.k, d.v)},
                              {"a softmax over the queries (each column) instead of over the keys (each row)", softmax_over_queries(d.q, d.k, d.v)},
                              {"exp(s) / Σ exp(s) without subtracting the largest score", attention_unshifted(d.q, d.k, d.v)}},
                             &scale);
    });
}
