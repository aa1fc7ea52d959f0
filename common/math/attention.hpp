// Definition 9.1: scaled dot-product attention, Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V,
// with every intermediate kept so a program can print the chapter's steps.
#pragma once

#include "core/tensor.hpp"

namespace attn {

struct AttentionSteps {
    Mat scores;   // (T_q, T_k)  q · k_j
    Mat scaled;   // (T_q, T_k)  scores / √d_k (or scores, unscaled), plus the bias where one is given
    Mat weights;  // (T_q, T_k)  softmax of each row; rows sum to 1
    Mat out;      // (T_q, d_v)  weights @ v
};

// q: (T_q, d_k), k: (T_k, d_k), v: (T_k, d_v). `keep` (T_q, T_k) may be null (no mask). `bias` (T_q, T_k), where given,
// is added to the scaled scores before the softmax: ALiBi's −m (t − i) (Mục 9.6); `scaled` then holds the sum.
// A NaN or ±inf in q, k or v is an Error naming which and where (the library's policy: an error, never NaN out).
AttentionSteps attention(const Mat& q, const Mat& k, const Mat& v, const Mask* keep = nullptr, bool scale = true,
                         const Mat* bias = nullptr);

// Attention from given scores (already scaled), as in Section 9.1's worked row (scores 0, ln 2, ln 3): weights = softmax, out = weights @ v.
AttentionSteps attention_from_scores(Mat scaled, const Mat& v, const Mask* keep = nullptr);

// Mục 9.8: the same out as attention(q, k, v) (with the causal mask when `causal`, which needs T_q = T_k), computed
// a tile at a time so that no (T_q, T_k) matrix is ever made. The queries go in tiles of `tile` rows; for each, the
// keys and values go by in tiles of `tile`, and every row keeps the online softmax's running max m, running sum l
// and unnormalised output acc (math/online_softmax.hpp's recurrence, for a tile of rows at once):
//   s = q_i k_jᵀ / √d_k  (rows, cols ≤ tile), −inf where masked   m' = max(m, the row's max of s)   c = exp(m − m')
//   p = exp(s − m')      l' = c l + the row's sum of p             acc' = c acc + p v_j              out_i = acc / l
// Memory: a few (tile, tile) and (tile, d_v) matrices besides the output. With `causal`, key tiles past a query
// tile's last row are skipped: every one of their scores is masked. Errors as attention()'s (shapes, a NaN or ±inf
// in q, k or v, a score that overflows fp32 to NaN or +inf, a row with no finite score), and for tile = 0 or no keys.
Mat tiled_attention(const Mat& q, const Mat& k, const Mat& v, bool causal, std::size_t tile = 64);

}  // namespace attn
