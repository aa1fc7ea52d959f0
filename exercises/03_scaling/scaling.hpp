// Exercises for Section 9.2, "Phép chia cho √d_k": why scores are divided by √d_k.
// Write the bodies in scaling.cpp beside this file; check with `tools/progress.sh`.
#pragma once

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;
using attn::Vec;

/// Exercise 3.1 — score_variance
/// q and k have shape (n, d): n pairs of vectors. Return the (population) variance of the n dot
/// products q_i · k_i, that is mean((s − mean s)²). Proposition 9.1 says it is ≈ d for N(0, 1) entries.
/// Throw attn::Error when q and k differ in shape or hold no pair (n = 0), naming both shapes.
/// Hint 1: first the n dot products, then their mean, then the mean of the squared deviations (divide by n).
/// Hint 2: accumulate in double: at d = 1024 the float sums lose the digits the variance needs.
/// [vi]
/// q và k có kích thước (n, d): n cặp vectơ. Trả về phương sai (tổng thể) của n tích vô hướng q_i · k_i,
/// tức là mean((s − mean s)²). Mệnh đề 9.1 nói nó ≈ d khi các phần tử là N(0, 1).
/// Ném attn::Error khi q và k khác kích thước hoặc không có cặp nào (n = 0), nêu cả hai kích thước.
/// Gợi ý 1: trước hết là n tích vô hướng, rồi trung bình của chúng, rồi trung bình bình phương độ lệch (chia cho n).
/// Gợi ý 2: cộng dồn bằng double: ở d = 1024 tổng bằng float mất những chữ số mà phương sai cần.
double score_variance(const Mat& q, const Mat& k);

/// Exercise 3.2 — entropy
/// The entropy of a probability row w (n,) in nats: H = −Σ_i w_i ln w_i, with 0 · ln 0 = 0.
/// Uniform over 64 keys gives ln 64 = 4.159; one-hot gives 0. Each w_i lies in [0, 1] (the sum is not
/// checked: rounding leaves it near 1); throw attn::Error, naming the entry, for one outside it or NaN. An empty
/// row (n = 0) has entropy 0.
/// Hint 1: the natural log (std::log), and mind the minus sign.
/// Hint 2: skip the terms with w_i == 0 — ln 0 is −∞, and 0 · −∞ is NaN in floating point.
/// [vi]
/// Entropy của một hàng xác suất w (n,) tính bằng nat: H = −Σ_i w_i ln w_i, với 0 · ln 0 = 0.
/// Đều trên 64 khoá cho ln 64 = 4.159; one-hot cho 0. Mỗi w_i nằm trong [0, 1] (tổng không được kiểm tra:
/// sai số làm tròn để nó gần 1); ném attn::Error, nêu tên phần tử, khi có phần tử nằm ngoài khoảng đó hoặc là NaN.
/// Hàng rỗng (n = 0) có entropy 0.
/// Gợi ý 1: logarit tự nhiên (std::log), và nhớ dấu trừ.
/// Gợi ý 2: bỏ qua các số hạng có w_i == 0 — ln 0 là −∞, và 0 · −∞ là NaN trong số thực dấu phẩy động.
double entropy(const Vec& w);

/// Exercise 3.3 — softmax_jacobian
/// For p = softmax(s) of shape (n,), return the (n, n) Jacobian J[i][j] = ∂p_i/∂s_j = p_i (δ_ij − p_j).
/// Near one-hot every entry is near 0: that is why a saturated softmax stops learning.
/// Hint 1: two cases, i = j and i ≠ j: δ_ij is 1 on the diagonal and 0 off it.
/// Hint 2: the diagonal is p_i (1 − p_i); off the diagonal it is −p_i p_j.
/// [vi]
/// Với p = softmax(s) kích thước (n,), trả về ma trận Jacobian (n, n) J[i][j] = ∂p_i/∂s_j = p_i (δ_ij − p_j).
/// Gần one-hot thì mọi phần tử đều gần 0: đó là lý do một softmax bão hoà ngừng học.
/// Gợi ý 1: hai trường hợp, i = j và i ≠ j: δ_ij bằng 1 trên đường chéo và 0 ngoài đường chéo.
/// Gợi ý 2: đường chéo là p_i (1 − p_i); ngoài đường chéo là −p_i p_j.
Mat softmax_jacobian(const Vec& p);

}  // namespace ex
