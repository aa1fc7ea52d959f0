// Exercises for Section 9.4, "Mặt nạ": masks. Write the bodies in masking.cpp beside this file;
// check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec06]"`.
#pragma once

#include <vector>

#include "core/tensor.hpp"

namespace ex {

using attn::Mask;
using attn::Vec;

/// Exercise 6.1 — causal_mask
/// Return the (T, T) causal mask in the "true = keep" convention: row t is query t, column i is key i,
/// and query t may read every key at or before its own position, never one after it. T = 0 gives an
/// empty (0, 0) mask.
/// Hint 1: position t predicts the *next* token, so reading itself leaks nothing: the diagonal is kept.
///         Off by one either way is a real bug — one blocks a token from itself, the other leaks the answer.
/// Hint 2: Mask::from_shape({T, T}), then keep(t, i) = (i <= t).
/// [vi]
/// Trả về mặt nạ nhân quả (T, T) theo quy ước "true = giữ": hàng t là truy vấn t, cột i là khoá i, và truy vấn t
/// được đọc mọi khoá ở vị trí của nó hoặc trước đó, không bao giờ khoá sau nó. T = 0 cho mặt nạ rỗng (0, 0).
/// Gợi ý 1: vị trí t dự đoán token *tiếp theo*, nên đọc chính nó không làm lộ gì: đường chéo được giữ.
///          Lệch một theo chiều nào cũng là lỗi thật — một chiều chặn token khỏi chính nó, chiều kia làm lộ đáp án.
/// Gợi ý 2: Mask::from_shape({T, T}), rồi keep(t, i) = (i <= t).
Mask causal_mask(std::size_t T);

/// Exercise 6.2 — causal_padding_mask
/// A sequence of T positions whose last T − valid are padding (0 ≤ valid ≤ T). Return the (T, T) mask
/// that keeps (t, i) only when the causal mask of 6.1 keeps it *and* key i is a real token.
/// Padded queries (rows t ≥ valid) still read the real keys before them; only padded keys are blocked.
/// Throw attn::Error, naming both, when valid > T.
/// Hint 1: two conditions, each on its own index; padding is a property of the key, the column.
/// Hint 2: keep(t, i) = (i <= t) && (i < valid).
/// [vi]
/// Một chuỗi T vị trí mà T − valid vị trí cuối là đệm (0 ≤ valid ≤ T). Trả về mặt nạ (T, T) chỉ giữ (t, i) khi
/// mặt nạ nhân quả của 6.1 giữ nó *và* khoá i là token thật. Các truy vấn đệm (hàng t ≥ valid) vẫn đọc các khoá
/// thật trước chúng; chỉ các khoá đệm bị chặn. Ném attn::Error, nêu tên cả hai, khi valid > T.
/// Gợi ý 1: hai điều kiện, mỗi điều kiện trên một chỉ số; đệm là thuộc tính của khoá, tức là của cột.
/// Gợi ý 2: keep(t, i) = (i <= t) && (i < valid).
Mask causal_padding_mask(std::size_t T, std::size_t valid);

/// Exercise 6.3 — masked_softmax_row
/// Softmax of scores (n,) over the kept positions only, returned as (n,): blocked positions get exactly
/// 0 and the kept ones sum to 1, whatever the blocked scores are (even 5000, even inf).
/// With scores (0, ln 2, ln 3) and keep (true, true, false): (1/3, 2/3, 0).
/// A kept score of −inf counts as blocked (weight exactly 0), as in the library's masked_softmax. Throw
/// attn::Error if no position is kept, or every kept score is −inf (this library's policy: never NaN, never
/// a made-up row), if a kept score is NaN or +inf, and when keep.size() differs from scores.size().
/// Hint 1: the mask acts *before* the normalisation: a blocked score must not enter the sum, nor the
///         shift that keeps exp from overflowing. Zeroing weights after a full softmax leaves the kept
///         ones summing to less than 1.
/// Hint 2: m = max over kept scores; w_i = exp(s_i − m) for kept i, 0 otherwise; divide by Σ w.
/// [vi]
/// Softmax của scores (n,) chỉ trên các vị trí được giữ, trả về (n,): vị trí bị chặn nhận đúng 0 và các vị trí
/// được giữ có tổng bằng 1, bất kể điểm của vị trí bị chặn là gì (kể cả 5000, kể cả inf).
/// Với scores (0, ln 2, ln 3) và keep (true, true, false): (1/3, 2/3, 0).
/// Một điểm được giữ bằng −inf coi như bị chặn (trọng số đúng 0), như masked_softmax của thư viện. Ném attn::Error
/// khi không vị trí nào được giữ, hoặc mọi điểm được giữ đều là −inf (chính sách của thư viện này: không bao giờ
/// NaN, không bao giờ một hàng bịa ra), khi một điểm được giữ là NaN hay +inf, và khi keep.size() khác scores.size().
/// Gợi ý 1: mặt nạ tác động *trước* bước chuẩn hoá: điểm bị chặn không được vào tổng, cũng không vào phép trừ
///          giữ cho exp khỏi tràn. Đặt trọng số về 0 sau một softmax đầy đủ để lại các trọng số được giữ có
///          tổng nhỏ hơn 1.
/// Gợi ý 2: m = max trên các điểm được giữ; w_i = exp(s_i − m) với i được giữ, 0 nếu không; chia cho Σ w.
Vec masked_softmax_row(const Vec& scores, const std::vector<bool>& keep);

}  // namespace ex
