// Exercises 2.1–2.3 (Definition 9.1). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "expect.hpp"
#include "02_soft_lookup/soft_lookup.hpp"
#include "attn/error.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"
#include "attn/table.hpp"

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
