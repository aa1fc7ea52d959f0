// Exercises for Sections 9.5, 9.7 and 9.8: the block's size, the n² wall, and the tile update that
// gets around it. Write the bodies in block.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec10]"`.
#pragma once

#include <cstddef>

#include "math/online_softmax.hpp"

namespace ex {

/// Exercise 10.1 — gpt2_param_count
/// The parameters of a GPT-2-shaped model, from its shape alone: a token table (V, d), a learned
/// position table (n_ctx, d), n_layers blocks, a final LayerNorm, and an output layer tied to the token
/// table (no parameters of its own). A block is attention (W_q, W_k, W_v, W_o, each with a bias), an FFN
/// (d → 4d → d, with biases) and two LayerNorms (a gain and a bias each).
/// GPT-2 small (V = 50,257, n_ctx = 1,024, d = 768, 12 layers) has 124,439,808. The test also asks for
/// GPT-2 XL (d = 1,600, 48 layers: 1.56 billion) and a GPT-3 175B shape (d = 12,288, 96 layers).
/// Hint 1: count each tensor's entries (a (r, c) matrix has r·c, a bias of width c has c) and add up.
///         An int holds up to 2,147,483,647: GPT-2 small's count fits, and so does every d² here — what
///         overflows is the count itself once a model passes ~2.1 billion parameters (GPT-3's
///         n_layers · 12 d² is 1.7·10^11). Keep every product in std::size_t.
/// Hint 2: per block 12 d² + 13 d (attention 4d² + 4d, FFN 8d² + 5d, two LayerNorms 4d);
///         total V d + n_ctx d + n_layers (12 d² + 13 d) + 2 d.
/// [vi]
/// Số tham số của một mô hình có hình dạng GPT-2, chỉ từ hình dạng của nó: bảng token (V, d), bảng vị trí học được
/// (n_ctx, d), n_layers khối, một LayerNorm cuối, và lớp đầu ra buộc (tied) với bảng token (không có tham số
/// riêng). Một khối gồm attention (W_q, W_k, W_v, W_o, mỗi ma trận có bias), một FFN (d → 4d → d, có bias) và hai
/// LayerNorm (mỗi cái một gain và một bias).
/// GPT-2 small (V = 50,257, n_ctx = 1,024, d = 768, 12 lớp) có 124,439,808. Bài kiểm tra còn hỏi GPT-2 XL
/// (d = 1,600, 48 lớp: 1.56 tỉ) và một hình dạng GPT-3 175B (d = 12,288, 96 lớp).
/// Gợi ý 1: đếm số phần tử của từng tensor (ma trận (r, c) có r·c, một bias độ rộng c có c) rồi cộng lại.
///          Một int chứa được tới 2,147,483,647: số của GPT-2 small vừa, mọi d² ở đây cũng vừa — cái bị tràn là
///          chính tổng số khi mô hình vượt ~2.1 tỉ tham số (n_layers · 12 d² của GPT-3 là 1.7·10^11). Giữ mọi
///          phép nhân trong std::size_t.
/// Gợi ý 2: mỗi khối 12 d² + 13 d (attention 4d² + 4d, FFN 8d² + 5d, hai LayerNorm 4d);
///          tổng V d + n_ctx d + n_layers (12 d² + 13 d) + 2 d.
std::size_t gpt2_param_count(std::size_t V, std::size_t n_ctx, std::size_t d, std::size_t n_layers);

/// Exercise 10.2 — attention_matrix_bytes
/// The bytes that one layer's n × n attention matrices (the scores, or the weights after softmax) take
/// for a batch of B sequences of n tokens and h heads, in fp32. One layer at h = 8, n = 16,384, B = 1
/// needs 8 GiB for one of them — the chapter's out-of-memory row, and more than an int can count.
/// Hint 1: count the matrices, then the entries of each, then the bytes of each entry.
/// Hint 2: B · h · n² · sizeof(float), multiplied in std::size_t (in int, 8 GiB wraps to 0).
/// [vi]
/// Số byte mà các ma trận attention n × n của một lớp (điểm số, hoặc trọng số sau softmax) chiếm cho một lô B chuỗi
/// n token và h đầu, ở fp32. Một lớp với h = 8, n = 16,384, B = 1 cần 8 GiB cho một trong hai — dòng hết bộ nhớ
/// của chương, và nhiều hơn một int đếm được.
/// Gợi ý 1: đếm số ma trận, rồi số phần tử của mỗi ma trận, rồi số byte của mỗi phần tử.
/// Gợi ý 2: B · h · n² · sizeof(float), nhân trong std::size_t (trong int, 8 GiB quay vòng về 0).
std::size_t attention_matrix_bytes(std::size_t B, std::size_t h, std::size_t n);

/// Exercise 10.3 — online_softmax_tile
/// One step of FlashAttention's recurrence for one query row. The state (m, l) is the largest score seen
/// so far and the sum of exp(score − m) over the scores seen; acc[0..d_head) is the unnormalised output,
/// Σ exp(score − m) · value row, over the same scores. Fold in a tile of n scores s[0..n) (already scaled;
/// −inf for masked keys) and their value rows v (row j at v + j·d_head): update acc in place and return
/// the new state, so that after the last tile acc / l is softmax(all scores) · V.
/// Edge cases: on the first tile the state is (−inf, 0) and acc holds garbage — any bits, NaN and inf
/// included — which must not survive: acc is then written, not rescaled; a tile whose scores are all −inf
/// changes nothing (state and acc as they were).
/// Hint 1: when a tile brings a larger maximum, everything accumulated so far was scaled for the old
///         one: rescale both l and acc before adding the tile. Compute the new maximum first.
/// Hint 2: m' = max(m, max_j s_j);  c = exp(m − m');  l' = c·l + Σ_j exp(s_j − m');
///         acc' = c·acc + Σ_j exp(s_j − m') v_j. If m' is still −inf, return the state untouched
///         (exp(−inf − (−inf)) is NaN); on the first tile (m = −inf) set acc to 0 before adding: c = 0
///         would wipe finite garbage, but 0 · NaN is NaN.
/// [vi]
/// Một bước trong phép truy hồi của FlashAttention cho một hàng truy vấn. Trạng thái (m, l) là điểm lớn nhất đã thấy
/// và tổng exp(score − m) trên các điểm đã thấy; acc[0..d_head) là đầu ra chưa chuẩn hoá, Σ exp(score − m) · hàng
/// giá trị, trên cùng các điểm đó. Gộp vào một ô (tile) gồm n điểm s[0..n) (đã chia tỉ lệ; −inf cho khoá bị che)
/// và các hàng giá trị v của chúng (hàng j ở v + j·d_head): cập nhật acc tại chỗ và trả về trạng thái mới, sao
/// cho sau ô cuối cùng acc / l là softmax(mọi điểm) · V.
/// Trường hợp biên: ở ô đầu tiên trạng thái là (−inf, 0) và acc chứa rác — bất kỳ bit nào, kể cả NaN và inf —
/// không được để sót lại: khi đó acc được ghi mới, không nhân tỉ lệ; một ô mà mọi điểm đều là −inf không thay đổi
/// gì (trạng thái và acc giữ nguyên).
/// Gợi ý 1: khi một ô mang đến giá trị lớn nhất mới, mọi thứ đã cộng dồn được chia tỉ lệ theo giá trị cũ: chia
///          lại tỉ lệ cả l và acc trước khi cộng ô mới. Tính giá trị lớn nhất mới trước.
/// Gợi ý 2: m' = max(m, max_j s_j);  c = exp(m − m');  l' = c·l + Σ_j exp(s_j − m');
///          acc' = c·acc + Σ_j exp(s_j − m') v_j. Nếu m' vẫn là −inf, trả về trạng thái nguyên vẹn
///          (exp(−inf − (−inf)) là NaN); ở ô đầu tiên (m = −inf) đặt acc về 0 trước khi cộng: c = 0 xoá được rác
///          hữu hạn, nhưng 0 · NaN vẫn là NaN.
attn::OnlineSoftmax online_softmax_tile(attn::OnlineSoftmax state, const float* s, int n, const float* v, int d_head,
                                        float* acc);

}  // namespace ex
