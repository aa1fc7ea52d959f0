// Exercises for Sections 9.1 and 9.3: learned attention, and the backward passes that learn it.
// Write the bodies in learned_attention.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec04]"`.
#pragma once

#include "attn/tensor.hpp"

namespace ex {

using attn::Mat;
using attn::Vec;

/// Exercise 4.1 — qk_scores
/// The scaled scores of one head: q = x W_q and k = x W_k with x (T, d_model) and W_q, W_k
/// (d_model, d_k); return (q kᵀ) / √d_k, shape (T, T). Unlike x xᵀ it is not symmetric.
/// Hint: two products, then a third with k transposed; d_k is W_q's number of columns.
Mat qk_scores(const Mat& x, const Mat& W_q, const Mat& W_k);

/// Exercise 4.2 — linear_backward
/// For y = x W + b with x (N, in), W (in, out), b (1, out) (added to every row) and the gradient
/// dy = ∂L/∂y (N, out), return the three gradients dx = ∂L/∂x (N, in), dW = ∂L/∂W (in, out) and
/// db = ∂L/∂b (1, out).
/// Hint 1: every gradient has the shape of the thing it is the gradient of; of the products you can form
///         from x, W, dy and their transposes, only one has each shape.
/// Hint 2: y_nj = Σ_i x_ni W_ij + b_j, so ∂y_nj/∂x_ni = W_ij, ∂y_nj/∂W_ij = x_ni and ∂y_nj/∂b_j = 1; sum each
///         over the indices it does not keep.
struct LinearGrads {
    Mat dx, dW, db;
};
LinearGrads linear_backward(const Mat& x, const Mat& W, const Mat& dy);

/// Exercise 4.3 — softmax_backward
/// For one row w = softmax(s) (n,) and dw = ∂L/∂w (n,), return ds = ∂L/∂s (n,), without forming the n×n
/// Jacobian.
/// Hint 1: the chain rule through the Jacobian of Section 9.2 (exercise 3.3): ds_j = Σ_i dw_i ∂w_i/∂s_j.
/// Hint 2: with ∂w_i/∂s_j = w_i (δ_ij − w_j) the sum becomes w_j (dw_j − Σ_i dw_i w_i): compute the dot
///         product Σ_i dw_i w_i once, then one pass over j.
Vec softmax_backward(const Vec& w, const Vec& dw);

}  // namespace ex
