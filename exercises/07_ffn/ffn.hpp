// Exercises for Section 9.5: the feed-forward network. Write the bodies in ffn.cpp beside this file;
// check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec07]"`.
#pragma once

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 7.1 — gelu
/// The exact GELU, elementwise, same shape as x: gelu(x) = x Φ(x), with Φ the standard normal's
/// cumulative distribution. gelu(0) = 0, gelu(1) ≈ 0.8413, gelu(−1) ≈ −0.1587; within 1e-6 of the
/// exact value — absolute where |gelu(x)| < 1, relative (1e-6 · |gelu(x)|) above — computed in double,
/// rounded once.
/// Hint 1: Φ has no closed form, but the standard library has the error function, and Φ is erf rescaled.
/// Hint 2: gelu(x) = ½ x (1 + erf(x / √2)); std::erf, std::numbers::sqrt2.
/// [vi]
/// GELU chính xác, theo từng phần tử, cùng kích thước với x: gelu(x) = x Φ(x), với Φ là hàm phân phối tích luỹ của
/// phân phối chuẩn tắc. gelu(0) = 0, gelu(1) ≈ 0.8413, gelu(−1) ≈ −0.1587; sai khác không quá 1e-6 so với giá
/// trị chính xác — tuyệt đối khi |gelu(x)| < 1, tương đối (1e-6 · |gelu(x)|) khi lớn hơn — tính bằng double, làm tròn
/// một lần.
/// Gợi ý 1: Φ không có dạng đóng, nhưng thư viện chuẩn có hàm sai số erf, và Φ là erf được co giãn lại.
/// Gợi ý 2: gelu(x) = ½ x (1 + erf(x / √2)); std::erf, std::numbers::sqrt2.
Mat gelu(const Mat& x);

/// Exercise 7.2 — gelu_tanh
/// GPT-2's tanh approximation of GELU, elementwise, same shape as x. It is within ~5e-4 of gelu but
/// is not gelu: the test checks it to 1e-6 (absolute below 1, relative above, as 7.1) against the published formula, so its constants matter
/// to the last digit.
/// Hint 1: Φ(x) is replaced by ½ (1 + tanh(a cubic in x)), the cubic's coefficients fitted once.
/// Hint 2: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))) — 0.044715, not 0.0447; compute √(2/π) once, in double.
/// [vi]
/// Xấp xỉ tanh của GELU mà GPT-2 dùng, theo từng phần tử, cùng kích thước với x. Nó cách gelu khoảng ~5e-4
/// nhưng không phải gelu: bài kiểm tra so nó với công thức đã công bố tới 1e-6 (tuyệt đối dưới 1, tương đối trên 1, như 7.1), nên các hằng số phải đúng tới
/// chữ số cuối.
/// Gợi ý 1: Φ(x) được thay bằng ½ (1 + tanh(một đa thức bậc ba theo x)), các hệ số của đa thức được khớp một lần.
/// Gợi ý 2: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))) — 0.044715, không phải 0.0447; tính √(2/π) một lần, bằng double.
Mat gelu_tanh(const Mat& x);

/// Exercise 7.3 — ffn_forward
/// The position-wise FFN: x (N, d), W_1 (d, d_ff), b_1 (1, d_ff), W_2 (d_ff, d), b_2 (1, d) → (N, d):
/// an affine map up to d_ff, your exact gelu, an affine map back to d. Each row of the result depends
/// on that row of x alone.
/// Hint 1: write the affine map once (x W + b, the bias row added to every row) and use it twice.
/// Hint 2: gelu(x W_1 + b_1) W_2 + b_2 — one GELU, between the two maps, not after the second.
/// [vi]
/// FFN theo từng vị trí: x (N, d), W_1 (d, d_ff), b_1 (1, d_ff), W_2 (d_ff, d), b_2 (1, d) → (N, d): một ánh xạ
/// affine lên d_ff, hàm gelu chính xác của bạn, một ánh xạ affine về lại d. Mỗi hàng của kết quả chỉ phụ thuộc
/// vào hàng đó của x.
/// Gợi ý 1: viết ánh xạ affine một lần (x W + b, hàng bias cộng vào mọi hàng) và dùng nó hai lần.
/// Gợi ý 2: gelu(x W_1 + b_1) W_2 + b_2 — một GELU, nằm giữa hai ánh xạ, không phải sau ánh xạ thứ hai.
Mat ffn_forward(const Mat& x, const Mat& W_1, const Mat& b_1, const Mat& W_2, const Mat& b_2);

}  // namespace ex
