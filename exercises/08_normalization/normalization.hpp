// Exercises for Section 9.5: LayerNorm, and where the block puts it (pre-norm vs post-norm). Write the
// bodies in normalization.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec08]"`.
#pragma once

#include <functional>

#include "core/config.hpp"  // attn::Norm
#include "core/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 8.1 — layernorm
/// Each row of x (N, d) on its own, to (N, d): subtract the row's mean, divide by its standard
/// deviation, then multiply by gain and add bias (both (1, d), entry by entry). The spread is the
/// *biased* variance (the mean square deviation over the row's d entries), and eps (> 0) is added to
/// it so that a constant row, whose variance is 0, stays finite: a constant row becomes `bias`.
/// Throw attn::Error when gain or bias is not (1, d), or eps is not a finite number above 0. Within 1e-5 of
/// the exact value (absolute below 1, relative above) for any finite x: a row far from 0 (10^4 + small
/// differences) needs its mean and variance accumulated in double, and x − mean taken in double.
/// Hint 1: two passes over the row — its mean, then its variance about that mean — accumulated in
///         double; then one more pass to write the normalised values.
/// Hint 2: xhat = (x − mean) · rstd with rstd = 1 / sqrt(var + eps), var = Σ (x − mean)² / d (not d − 1,
///         and eps inside the square root); y = gain ⊙ xhat + bias.
/// [vi]
/// Mỗi hàng của x (N, d) riêng rẽ, thành (N, d): trừ trung bình của hàng, chia cho độ lệch chuẩn của nó, rồi nhân
/// với gain và cộng bias (cả hai (1, d), từng phần tử). Độ phân tán là phương sai *lệch* (trung bình bình phương
/// độ lệch trên d phần tử của hàng), và eps (> 0) được cộng vào nó để một hàng hằng, có phương sai 0, vẫn hữu
/// hạn: một hàng hằng trở thành `bias`. Ném attn::Error khi gain hoặc bias không có kích thước (1, d), hoặc eps
/// không phải một số hữu hạn lớn hơn 0. Sai khác không quá 1e-5 so với giá trị đúng (tuyệt đối khi nhỏ hơn 1,
/// tương đối khi lớn hơn) với mọi x hữu hạn: một hàng xa 0 (10^4 cộng những chênh lệch nhỏ) cần trung bình và
/// phương sai được cộng dồn bằng double, và x − mean được tính bằng double.
/// Gợi ý 1: hai lượt qua hàng — trung bình, rồi phương sai quanh trung bình đó — cộng dồn bằng double; rồi một
///          lượt nữa để ghi các giá trị đã chuẩn hoá.
/// Gợi ý 2: xhat = (x − mean) · rstd với rstd = 1 / sqrt(var + eps), var = Σ (x − mean)² / d (không phải d − 1,
///          và eps nằm trong căn); y = gain ⊙ xhat + bias.
Mat layernorm(const Mat& x, const Mat& gain, const Mat& bias, float eps = 1e-5f);

/// Exercise 8.2 — layernorm_backward
/// The gradient ∂L/∂x (N, d) of a loss L through y = layernorm(x, gain, bias, eps) of 8.1, given
/// dy = ∂L/∂y (N, d). bias does not enter (it shifts y, not its slope). Each row on its own; each row of
/// the result sums to 0, because a LayerNorm ignores a shift of its input. Throw attn::Error when gain is
/// not (1, d), dy's shape differs from x's, or eps is not a finite number above 0. Within 1e-5 as 8.1,
/// relative to the size of the row's terms (rstd · |gain ⊙ dy|).
/// Hint 1: y depends on x_j directly, and also through the row's mean and through its variance, both of
///         which every entry of the row moves. The direct path alone (rstd · gain ⊙ dy) is not enough:
///         there are three terms. Differentiate xhat with respect to x, then apply the chain rule.
/// Hint 2: with xhat = (x − mean) · rstd and g = dy ⊙ gain, per row:
///             dx = rstd · (g − mean(g) − xhat · mean(g ⊙ xhat))
///         both means over the row's d entries; recompute mean, rstd and xhat from x.
/// [vi]
/// Gradient ∂L/∂x (N, d) của một hàm mất mát L qua y = layernorm(x, gain, bias, eps) của 8.1, cho trước
/// dy = ∂L/∂y (N, d). bias không tham gia (nó dịch y chứ không đổi độ dốc). Mỗi hàng riêng rẽ; mỗi hàng của kết
/// quả có tổng bằng 0, vì LayerNorm bỏ qua một phép dịch của đầu vào. Ném attn::Error khi gain không có kích
/// thước (1, d), kích thước của dy khác của x, hoặc eps không phải một số hữu hạn lớn hơn 0. Sai khác không quá
/// 1e-5 như 8.1, tương đối theo độ lớn các số hạng của hàng (rstd · |gain ⊙ dy|).
/// Gợi ý 1: y phụ thuộc x_j trực tiếp, và còn qua trung bình và phương sai của hàng, hai đại lượng mà mọi phần
///          tử của hàng đều làm thay đổi. Chỉ đường trực tiếp (rstd · gain ⊙ dy) là chưa đủ: có ba số hạng.
///          Lấy đạo hàm xhat theo x, rồi áp dụng quy tắc dây chuyền.
/// Gợi ý 2: với xhat = (x − mean) · rstd và g = dy ⊙ gain, theo từng hàng:
///              dx = rstd · (g − mean(g) − xhat · mean(g ⊙ xhat))
///          cả hai trung bình lấy trên d phần tử của hàng; tính lại mean, rstd và xhat từ x.
Mat layernorm_backward(const Mat& x, const Mat& gain, const Mat& dy, float eps = 1e-5f);

/// Exercise 8.3 — residual_sublayer
/// One sub-layer f (attention or FFN, (N, d) → (N, d)) with its residual connection and a LayerNorm
/// `norm` ((N, d) → (N, d)), placed as `placement` asks, to (N, d):
///     Norm::pre  (GPT-2, and almost every model since 2019): the LayerNorm on the sub-layer's input only;
///     Norm::post (the 2017 paper): the LayerNorm after the residual sum;
///     Norm::none: no LayerNorm at all (norm is not called): the residual sum alone.
/// Hint 1: in pre-norm the residual path x is never normalised; in post-norm the LayerNorm sits on it.
/// Hint 2: pre-norm x + f(norm(x)); post-norm norm(x + f(x)); none x + f(x).
/// [vi]
/// Một lớp con f (attention hoặc FFN, (N, d) → (N, d)) với kết nối tắt (residual) của nó và một LayerNorm
/// `norm` ((N, d) → (N, d)), đặt theo `placement`, thành (N, d):
///     Norm::pre  (GPT-2, và gần như mọi mô hình từ 2019): LayerNorm chỉ trên đầu vào của lớp con;
///     Norm::post (bài báo 2017): LayerNorm sau tổng residual;
///     Norm::none: không có LayerNorm nào (không gọi norm): chỉ có tổng residual.
/// Gợi ý 1: ở pre-norm, đường residual x không bao giờ bị chuẩn hoá; ở post-norm, LayerNorm nằm trên nó.
/// Gợi ý 2: pre-norm x + f(norm(x)); post-norm norm(x + f(x)); none x + f(x).
Mat residual_sublayer(const Mat& x, const std::function<Mat(const Mat&)>& f,
                      const std::function<Mat(const Mat&)>& norm, attn::Norm placement);

}  // namespace ex
