// Exercises for Section 9.1, Definition 9.1: attention as a soft lookup.
// Write the bodies in soft_lookup.cpp beside this file; check with `tools/progress.sh`.
#pragma once

#include "attn/tensor.hpp"

namespace ex {

using attn::Mat;
using attn::Vec;

/// Exercise 2.1 — stable_softmax
/// Return softmax(s)_i = exp(s_i) / Σ_j exp(s_j) for s of shape (n,), computed stably: subtract the
/// largest score first, so that scores like (1000, 1001) give (0.269, 0.731) instead of inf/inf = NaN.
/// Hint 1: softmax(s) = softmax(s − c) for any constant c: the c cancels between numerator and sum.
/// Hint 2: choose c = max_j s_j, so that every exp(s_j − c) is ≤ 1 and none overflows.
Vec stable_softmax(const Vec& s);

/// Exercise 2.2 — attention_row
/// One query against T_k keys: q (d_k,), k (T_k, d_k), v (T_k, d_v) → output (d_v,).
///   scores_j = q · k_j / √d_k,  weights = softmax(scores),  output = Σ_j weights_j v_j.
/// Example 9.1: q = (1, 0), keys (1,0), (0,1), (1,1), values (1,0), (0,1), (2,2) → (1.203, 1.000).
/// Hint 1: three steps — scores, weights, weighted sum — each a short loop.
/// Hint 2: reuse your stable_softmax for the weights; d_k is the number of columns of k.
Vec attention_row(const Vec& q, const Mat& k, const Mat& v);

/// Exercise 2.3 — attention
/// Definition 9.1 for a whole matrix of queries: Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V with
/// q (T_q, d_k), k (T_k, d_k), v (T_k, d_v) → (T_q, d_v). Throw attn::Error when the shapes do not fit
/// (q and k differ in d_k, or k and v differ in T_k), naming both shapes.
/// Hint 1: each row of the result is attention_row of the matching row of q.
/// Hint 2: check the shapes first (q.shape(1) against k.shape(1), k.shape(0) against v.shape(0)) and throw
///         attn::Error with attn::shape_str of each.
Mat attention(const Mat& q, const Mat& k, const Mat& v);

}  // namespace ex
