// Exercises for Section 9.1, Definition 9.1: attention as a soft lookup.
// Write the bodies in soft_lookup.cpp beside this file; check with `tools/progress.sh`.
#pragma once

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;
using attn::Vec;

/// Exercise 2.1 — stable_softmax
/// Return softmax(s)_i = exp(s_i) / Σ_j exp(s_j) for s of shape (n,), computed stably: subtract the
/// largest score first, so that scores like (1000, 1001) give (0.269, 0.731) instead of inf/inf = NaN.
/// Every score is finite. Throw attn::Error when s is empty (n = 0: there is no largest score, and no
/// distribution over nothing).
/// Hint 1: softmax(s) = softmax(s − c) for any constant c: the c cancels between numerator and sum.
/// Hint 2: choose c = max_j s_j, so that every exp(s_j − c) is ≤ 1 and none overflows.
/// [vi]
/// Trả về softmax(s)_i = exp(s_i) / Σ_j exp(s_j) cho s kích thước (n,), tính một cách ổn định: trừ điểm lớn nhất
/// trước, để các điểm như (1000, 1001) cho (0.269, 0.731) chứ không phải inf/inf = NaN.
/// Mọi điểm đều hữu hạn. Ném attn::Error khi s rỗng (n = 0: không có điểm lớn nhất, và không có phân phối trên tập rỗng).
/// Gợi ý 1: softmax(s) = softmax(s − c) với mọi hằng số c: c triệt tiêu giữa tử số và tổng.
/// Gợi ý 2: chọn c = max_j s_j, để mọi exp(s_j − c) ≤ 1 và không số nào tràn.
Vec stable_softmax(const Vec& s);

/// Exercise 2.2 — attention_row
/// One query against T_k keys: q (d_k,), k (T_k, d_k), v (T_k, d_v) → output (d_v,).
///   scores_j = q · k_j / √d_k,  weights = softmax(scores),  output = Σ_j weights_j v_j.
/// Example 9.1: q = (1, 0), keys (1,0), (0,1), (1,1), values (1,0), (0,1), (2,2) → (1.203, 1.000).
/// Throw attn::Error, naming the shapes, when they do not fit (q's d_k differs from k's, or k and v differ
/// in T_k), when there is no key (T_k = 0: no distribution over nothing) or when d_k = 0 (no √d_k to divide by).
/// Hint 1: three steps — scores, weights, weighted sum — each a short loop.
/// Hint 2: reuse your stable_softmax for the weights; d_k is the number of columns of k.
/// [vi]
/// Một truy vấn với T_k khoá: q (d_k,), k (T_k, d_k), v (T_k, d_v) → đầu ra (d_v,).
///   scores_j = q · k_j / √d_k,  weights = softmax(scores),  output = Σ_j weights_j v_j.
/// Ví dụ 9.1: q = (1, 0), các khoá (1,0), (0,1), (1,1), các giá trị (1,0), (0,1), (2,2) → (1.203, 1.000).
/// Ném attn::Error, nêu tên các kích thước, khi chúng không khớp (d_k của q khác của k, hoặc k và v khác T_k),
/// khi không có khoá nào (T_k = 0: không có phân phối trên tập rỗng) hoặc khi d_k = 0 (không có √d_k để chia).
/// Gợi ý 1: ba bước — điểm số, trọng số, tổng có trọng số — mỗi bước một vòng lặp ngắn.
/// Gợi ý 2: dùng lại stable_softmax của bạn cho các trọng số; d_k là số cột của k.
Vec attention_row(const Vec& q, const Mat& k, const Mat& v);

/// Exercise 2.3 — attention
/// Definition 9.1 for a whole matrix of queries: Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V with
/// q (T_q, d_k), k (T_k, d_k), v (T_k, d_v) → (T_q, d_v). Throw attn::Error when the shapes do not fit
/// (q and k differ in d_k, or k and v differ in T_k), naming both shapes, and, as 2.2, when T_k = 0 or
/// d_k = 0. No query (T_q = 0) is no error: the result is (0, d_v).
/// Hint 1: each row of the result is attention_row of the matching row of q.
/// Hint 2: check the shapes first (q.shape(1) against k.shape(1), k.shape(0) against v.shape(0)) and throw
///         attn::Error with attn::shape_str of each.
/// [vi]
/// Định nghĩa 9.1 cho cả một ma trận truy vấn: Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V với
/// q (T_q, d_k), k (T_k, d_k), v (T_k, d_v) → (T_q, d_v). Ném attn::Error khi các kích thước không khớp
/// (q và k khác d_k, hoặc k và v khác T_k), nêu tên cả hai kích thước, và, như 2.2, khi T_k = 0 hoặc
/// d_k = 0. Không có truy vấn nào (T_q = 0) không phải lỗi: kết quả là (0, d_v).
/// Gợi ý 1: mỗi hàng của kết quả là attention_row của hàng tương ứng của q.
/// Gợi ý 2: kiểm tra kích thước trước (q.shape(1) với k.shape(1), k.shape(0) với v.shape(0)) và ném attn::Error
///          kèm attn::shape_str của từng ma trận.
Mat attention(const Mat& q, const Mat& k, const Mat& v);

}  // namespace ex
