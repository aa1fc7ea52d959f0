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

TEST_CASE("Exercise 2.1: stable_softmax — C03's weights, and no overflow", "[ex2.1][sec02]") {
    const Vec s03 = {0.0f, std::log(2.0f), std::log(3.0f)};
    if (!ex_test::expect_close(ex::stable_softmax(s03), Vec{1.0f / 6, 2.0f / 6, 3.0f / 6}, 1e-6, "scores (0, ln 2, ln 3)")) return;
    // Only the largest score works as the shift: with none, the smallest or the first, some exp(s − c)
    // overflows (float's exp does past 88.7). Each input tells one of those apart from the others, given the
    // inputs before it: no shift fails the first; on the second it gives what the smallest does, so it is
    // no longer a candidate there.
    std::vector<std::string> ruled_out;  // mistakes an input the learner's code passed would have failed
    for (const Vec& s : {Vec{1000.0f, 1001.0f}, Vec{500.0f, 1000.0f, -1000.0f}, Vec{-1000.0f, -1001.0f}}) {
        std::vector<ex_test::Mistake<Vec>> mistakes;
        for (auto& m : std::vector<ex_test::Mistake<Vec>>{
                 {"subtracting the smallest score (exp overflows to inf)", softmax_shifted_by(s, *std::min_element(s.begin(), s.end()))},
                 {"subtracting the first score (exp overflows to inf)", softmax_shifted_by(s, s(0))},
                 {"no shift at all (exp overflows to inf)", softmax_shifted_by(s, 0.0f)}})
            if (std::find(ruled_out.begin(), ruled_out.end(), m.name) == ruled_out.end()) mistakes.push_back(std::move(m));
        const Vec want = spec::softmax(s);
        if (!ex_test::expect_close(ex::stable_softmax(s), want, 1e-6, "scores " + attn::fmt_vec(s, 0), mistakes)) return;
        for (const auto& m : mistakes)
            if (ex_test::detail::first_difference(m.value, want, 1e-6) != want.size()) ruled_out.push_back(m.name);
    }
    attn::Rng rng(201);
    for (int trial = 0; trial < 10; ++trial) {
        const Vec s = rng.normal_vec(1 + rng.below(30)) * 10.0f;
        if (!ex_test::expect_close(ex::stable_softmax(s), spec::softmax(s), 1e-6, "random trial " + std::to_string(trial) + ", s " + attn::shape_str(s)))
            break;
    }
}

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
            break;
    }
}

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
    const Mat q = xt::zeros<float>({1, 2}), k3 = xt::zeros<float>({3, 3}), v3 = xt::zeros<float>({3, 2});
    ex_test::expect_error([&] { (void)ex::attention(q, k3, v3); }, "q (1, 2), k (3, 3)", {"(1, 2)", "(3, 3)"});
    const Mat k2 = xt::zeros<float>({3, 2}), v4 = xt::zeros<float>({4, 2});
    ex_test::expect_error([&] { (void)ex::attention(q, k2, v4); }, "k (3, 2), v (4, 2)", {"(3, 2)", "(4, 2)"});
}
