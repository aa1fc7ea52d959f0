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

}  // namespace attn
