// Numerically stable softmax, and softmax under a mask.
//
// Stability: softmax(s) = softmax(s − max s), so we subtract the row's largest allowed score before
// exp; nothing overflows and the result is unchanged.
//
// Masks: a Mask is true where a query may look ("true = keep"; some libraries use true = blocked —
// see Section 9.4). A blocked score is treated as −∞: its weight is exactly 0 and the rest renormalise.
//
// Policy for bad rows (the scalar reference of Section 9.4, "Mặt nạ"): a row with no allowed position is an error,
// never NaN and never a silent uniform row; a NaN or +∞ score is an error. A −∞ score in plain
// softmax_rows is allowed and means "blocked", which is how C04's third averaging works.
#pragma once

#include "core/tensor.hpp"

namespace attn {

Vec softmax(const Vec& s);                             // (n,) → (n,)
Mat softmax_rows(const Mat& scores);                   // (T_q, T_k) → (T_q, T_k), each row sums to 1
Mat masked_softmax(const Mat& scores, const Mask& keep);  // blocked entries get weight exactly 0

Mask causal_mask(std::size_t T);                      // (T, T), keep[t][i] = (i <= t)
Mat masked_fill(const Mat& scores, const Mask& keep, float fill);  // blocked entries replaced by `fill`

// The softmax Jacobian J_ij = ∂p_i/∂s_j = p_i (δ_ij − p_j), for a probability row p.  (n,) → (n, n)
Mat softmax_jacobian(const Vec& p);

// The softmax backward for each row of w: ds = Jᵀ dw = w ⊙ (dw − Σ_j dw_j w_j), the Jacobian above
// applied without forming it. w, dw, ds: (rows, cols), row-major; a masked entry (w = 0) gets ds = 0.
void softmax_rows_backward(const float* w, const float* dw, float* ds, std::size_t rows, std::size_t cols);

}  // namespace attn
