// Exercises for Section 9.1, attention derived from averaging: averaging a growing prefix.
// Write the bodies in averaging.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec01]"`. The answers are in solutions/01_averaging/.
#pragma once

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 1.1 — prefix_average
/// Given x of shape (T, d), return y of shape (T, d) where row t is the mean of rows 0..t of x:
///   y[t] = (x[0] + x[1] + … + x[t]) / (t + 1).
/// Write it as the obvious loop; this is the "loop of means" of the chapter. An empty x (T = 0 or d = 0)
/// gives an empty y of the same shape.
/// Hint 1: row t of y depends on rows 0..t of x only; how many rows is that?
/// Hint 2: two loops over t and the feature j, and an inner sum over i ≤ t; divide by (t + 1), not by T.
/// [vi]
/// Cho x có kích thước (T, d), trả về y cùng kích thước, trong đó hàng t là trung bình của các hàng 0..t của x:
///   y[t] = (x[0] + x[1] + … + x[t]) / (t + 1).
/// Viết bằng vòng lặp hiển nhiên; đây là "vòng lặp các trung bình" của chương. x rỗng (T = 0 hoặc d = 0)
/// cho y rỗng cùng kích thước.
/// Gợi ý 1: hàng t của y chỉ phụ thuộc vào các hàng 0..t của x; đó là bao nhiêu hàng?
/// Gợi ý 2: hai vòng lặp theo t và theo đặc trưng j, bên trong là tổng theo i ≤ t; chia cho (t + 1), không phải cho T.
Mat prefix_average(const Mat& x);

/// Exercise 1.2 — averaging_matrix
/// Return the (T, T) matrix A with A[t][i] = 1/(t + 1) for i ≤ t and 0 above the diagonal, so that
/// A @ x equals prefix_average(x). Each row sums to 1; the upper triangle is zero. T = 0 gives (0, 0).
/// Hint 1: row t of A holds the weights of the mean in row t of prefix_average.
/// Hint 2: start from xt::zeros<float>({T, T}) and fill the lower triangle, diagonal included, with 1/(t + 1).
/// [vi]
/// Trả về ma trận A kích thước (T, T) với A[t][i] = 1/(t + 1) khi i ≤ t và 0 phía trên đường chéo, sao cho
/// A @ x bằng prefix_average(x). Mỗi hàng có tổng bằng 1; tam giác trên bằng 0. T = 0 cho (0, 0).
/// Gợi ý 1: hàng t của A chứa các trọng số của phép trung bình ở hàng t của prefix_average.
/// Gợi ý 2: bắt đầu từ xt::zeros<float>({T, T}) và điền tam giác dưới, kể cả đường chéo, bằng 1/(t + 1).
Mat averaging_matrix(std::size_t T);

/// Exercise 1.3 — causal_scores
/// Return the (T, T) score matrix whose row-wise softmax is A: 0 on and below the diagonal,
/// −∞ above it (std::numeric_limits<float>::infinity() negated). Softmax turns the zeros into equal
/// weights and the −∞ into exact zeros: masking and normalising are one operation. T = 0 gives (0, 0).
/// Hint 1: which keys i may query t read? Those get a score of 0; the others get −∞.
/// Hint 2: the entry (t, i) is blocked when i > t — the future; the diagonal (i = t) stays 0.
/// [vi]
/// Trả về ma trận điểm số (T, T) mà softmax theo hàng của nó chính là A: 0 trên và dưới đường chéo,
/// −∞ phía trên (std::numeric_limits<float>::infinity() lấy dấu âm). Softmax biến các số 0 thành các trọng số
/// bằng nhau và −∞ thành đúng 0: che và chuẩn hoá là một phép toán. T = 0 cho (0, 0).
/// Gợi ý 1: truy vấn t được đọc những khoá i nào? Các ô đó có điểm 0; các ô còn lại có −∞.
/// Gợi ý 2: ô (t, i) bị chặn khi i > t — tương lai; đường chéo (i = t) giữ giá trị 0.
Mat causal_scores(std::size_t T);

}  // namespace ex
