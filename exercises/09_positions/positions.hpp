// Exercises for Section 9.6, "Mã hoá vị trí": positional encoding. Write the bodies in positions.cpp
// beside this file; check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec09]"`.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 9.1 — sinusoidal_table
/// The (T, d) table of the 2017 paper, d even: row i encodes position i; columns 2t and 2t+1 form pair t,
/// the sine and the cosine (in that order) of one angle i · ω_t, with ω_t = 10000^(−2t/d) for
/// t = 0 … d/2 − 1: 1 at the first pair, falling geometrically towards 1/10000, which the last pair
/// (10000^(−(d−2)/d)) does not reach. Row 0 is (0, 1, 0, 1, …). T = 0 gives (0, d); an odd d (0 is even)
/// throws attn::Error. Within 2e-6 of the exact sine and cosine at every position, 10^5 and past included.
/// Hint 1: the frequency depends on the pair index t = column / 2, not on the column; both columns of a
///         pair share it. Compute the angle in double.
/// Hint 2: p[i][2t] = sin(i / 10000^(2t/d)), p[i][2t+1] = cos(i / 10000^(2t/d)) — and 2t/d is a
///         fraction: in integer arithmetic it is 0.
/// [vi]
/// Bảng (T, d) của bài báo 2017, d chẵn: hàng i mã hoá vị trí i; các cột 2t và 2t+1 tạo thành cặp t, là sin và
/// cos (theo thứ tự đó) của cùng một góc i · ω_t, với ω_t = 10000^(−2t/d) cho
/// t = 0 … d/2 − 1: bằng 1 ở cặp đầu, giảm theo cấp số nhân về phía 1/10000 mà cặp cuối (10000^(−(d−2)/d)) không
/// chạm tới. Hàng 0 là (0, 1, 0, 1, …). T = 0 cho (0, d); d lẻ (0 là số chẵn) ném attn::Error. Sai khác không quá
/// 2e-6 so với sin và cos đúng ở mọi vị trí, kể cả 10^5 và xa hơn.
/// Gợi ý 1: tần số phụ thuộc chỉ số cặp t = cột / 2, không phải chỉ số cột; hai cột của một cặp dùng chung nó.
///          Tính góc bằng double.
/// Gợi ý 2: p[i][2t] = sin(i / 10000^(2t/d)), p[i][2t+1] = cos(i / 10000^(2t/d)) — và 2t/d là một phân số: trong
///          số học số nguyên nó bằng 0.
Mat sinusoidal_table(std::size_t T, std::size_t d);

/// Exercise 9.2 — rope_rotate
/// RoPE: x (T, d), d even, to (T, d). Row i sits at position first_position + i. Each pair of columns
/// (2t, 2t+1) of the row is rotated, counter-clockwise, by an angle proportional to the position, with
/// the same frequencies ω_t as 9.1's table. Then rope(q) · rope(k) depends only on the distance between
/// their positions. An odd d throws attn::Error; T = 0 gives (0, d). Within 2e-6 (relative to the pair's
/// length, where it is above 1) of the exact rotation at every position, 10^5 and past included.
/// Hint 1: rotate, don't add: a 2-D rotation of (x[2t], x[2t+1]) by θ = position · ω_t.
/// Hint 2: θ = (first_position + i) · 10000^(−2t/d);
///         (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ).
/// [vi]
/// RoPE: x (T, d), d chẵn, thành (T, d). Hàng i ở vị trí first_position + i. Mỗi cặp cột (2t, 2t+1) của hàng được
/// quay ngược chiều kim đồng hồ một góc tỉ lệ với vị trí, với cùng các tần số ω_t như bảng của 9.1. Khi đó
/// rope(q) · rope(k) chỉ phụ thuộc khoảng cách giữa hai vị trí. d lẻ ném attn::Error; T = 0 cho (0, d). Sai khác
/// không quá 2e-6 (tương đối theo độ dài của cặp, khi nó lớn hơn 1) so với phép quay đúng ở mọi vị trí, kể cả 10^5
/// và xa hơn.
/// Gợi ý 1: quay, không cộng: một phép quay 2 chiều của (x[2t], x[2t+1]) một góc θ = vị trí · ω_t.
/// Gợi ý 2: θ = (first_position + i) · 10000^(−2t/d);
///          (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ).
Mat rope_rotate(const Mat& x, std::size_t first_position);

/// Exercise 9.3 — alibi_bias
/// ALiBi for head j (1-based, 1 ≤ j ≤ n_heads): return the (T, T) bias added to the scores, 0 on the
/// diagonal and above it (the causal mask blocks those anyway), and below it a penalty growing linearly
/// with the distance t − i, at a slope m_j that halves from head to head when n_heads = 8
/// (1/2, 1/4, …, 1/256), for any n_heads — 12 and 6 too, where the exponent is not a whole number.
/// Throw attn::Error when head is not in 1..n_heads (n_heads = 0 included). T = 0 gives (0, 0).
/// Hint 1: the slope is a power of 2 whose exponent is proportional to j / n_heads.
/// Hint 2: m = 2^(−8 j / n_heads), computed in floating point (8 j / n_heads in integers truncates: for
///         12 heads, head 1 would get slope 1); bias(t, i) = −m (t − i) for i ≤ t.
/// [vi]
/// ALiBi cho đầu j (đánh số từ 1, 1 ≤ j ≤ n_heads): trả về bias (T, T) cộng vào điểm số, bằng 0 trên đường chéo và
/// phía trên (mặt nạ nhân quả đằng nào cũng chặn chúng), và phía dưới là một mức phạt tăng tuyến tính theo khoảng
/// cách t − i, với độ dốc m_j giảm một nửa từ đầu này sang đầu kia khi n_heads = 8 (1/2, 1/4, …, 1/256), với mọi
/// n_heads — cả 12 và 6, khi số mũ không phải số nguyên. Ném attn::Error khi head không nằm trong 1..n_heads (kể
/// cả n_heads = 0). T = 0 cho (0, 0).
/// Gợi ý 1: độ dốc là một luỹ thừa của 2 với số mũ tỉ lệ với j / n_heads.
/// Gợi ý 2: m = 2^(−8 j / n_heads), tính bằng số thực (8 j / n_heads theo số nguyên bị cắt: với 12 đầu, đầu 1 sẽ
///          có độ dốc 1); bias(t, i) = −m (t − i) với i ≤ t.
Mat alibi_bias(std::size_t T, std::size_t n_heads, std::size_t head);

}  // namespace ex
