// Exercises for Sections 9.1 and 9.3: learned attention, and the backward passes that learn it.
// Write the bodies in learned_attention.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec04]"`.
#pragma once

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;
using attn::Vec;

/// Exercise 4.1 — qk_scores
/// The scaled scores of one head: q = x W_q and k = x W_k with x (T, d_model) and W_q, W_k
/// (d_model, d_k); return (q kᵀ) / √d_k, shape (T, T). Unlike x xᵀ it is not symmetric.
/// Hint 1: two products, then a third with k transposed.
/// Hint 2: d_k is W_q's number of columns, not d_model.
/// [vi]
/// Các điểm số đã chia tỉ lệ của một đầu: q = x W_q và k = x W_k với x (T, d_model) và W_q, W_k
/// (d_model, d_k); trả về (q kᵀ) / √d_k, kích thước (T, T). Khác với x xᵀ, nó không đối xứng.
/// Gợi ý 1: hai phép nhân, rồi phép thứ ba với k chuyển vị.
/// Gợi ý 2: d_k là số cột của W_q, không phải d_model.
Mat qk_scores(const Mat& x, const Mat& W_q, const Mat& W_k);

/// Exercise 4.2 — linear_backward
/// For y = x W + b with x (N, in), W (in, out), b (1, out) (added to every row) and the gradient
/// dy = ∂L/∂y (N, out), return the three gradients dx = ∂L/∂x (N, in), dW = ∂L/∂W (in, out) and
/// db = ∂L/∂b (1, out).
/// Hint 1: every gradient has the shape of the thing it is the gradient of; of the products you can form
///         from x, W, dy and their transposes, only one has each shape.
/// Hint 2: y_nj = Σ_i x_ni W_ij + b_j, so ∂y_nj/∂x_ni = W_ij, ∂y_nj/∂W_ij = x_ni and ∂y_nj/∂b_j = 1; sum each
///         over the indices it does not keep.
/// [vi]
/// Với y = x W + b, x (N, in), W (in, out), b (1, out) (cộng vào mọi hàng) và gradient dy = ∂L/∂y (N, out),
/// trả về ba gradient dx = ∂L/∂x (N, in), dW = ∂L/∂W (in, out) và db = ∂L/∂b (1, out).
/// Gợi ý 1: mỗi gradient có cùng kích thước với đại lượng mà nó là gradient; trong các tích tạo được từ x, W,
///          dy và chuyển vị của chúng, chỉ một tích có mỗi kích thước.
/// Gợi ý 2: y_nj = Σ_i x_ni W_ij + b_j, nên ∂y_nj/∂x_ni = W_ij, ∂y_nj/∂W_ij = x_ni và ∂y_nj/∂b_j = 1; lấy tổng
///          mỗi đạo hàm theo các chỉ số mà nó không giữ lại.
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
/// [vi]
/// Với một hàng w = softmax(s) (n,) và dw = ∂L/∂w (n,), trả về ds = ∂L/∂s (n,), không lập ma trận Jacobian n×n.
/// Gợi ý 1: quy tắc dây chuyền qua Jacobian của Mục 9.2 (bài 3.3): ds_j = Σ_i dw_i ∂w_i/∂s_j.
/// Gợi ý 2: với ∂w_i/∂s_j = w_i (δ_ij − w_j), tổng trở thành w_j (dw_j − Σ_i dw_i w_i): tính tích vô hướng
///          Σ_i dw_i w_i một lần, rồi một vòng lặp theo j.
Vec softmax_backward(const Vec& w, const Vec& dw);

}  // namespace ex
