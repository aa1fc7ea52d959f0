// Section 9.3 and 9.4: multi-head causal self-attention, forward and backward.
//
// The model computes q = x W_q, k = x W_k, v = x W_v, each (B·T, d_model). Heads split the feature
// axis: head h owns columns [h·d_head, (h+1)·d_head) with d_head = d_model / n_heads, and runs
// Definition 9.1 on its slice — scaled by √d_head, not √d_model — under the causal mask. The heads'
// outputs are concatenated back to (B·T, d_model) and mixed by W_o (a linear layer, not here).
// One head is n_heads = 1. `uniform` replaces the learned scores by equal ones: softmax of the masked
// zero matrix, the prefix average of Section 9.1 — the baseline a learned head must beat.
// `causal = false` drops the mask: every position attends to all T of its sequence, as an encoder's
// self-attention does (nn.MultiheadAttention without attn_mask; claim C32 compares the two). The
// backward reads only the cached weights, so it serves both.
#pragma once

#include "attn/tensor.hpp"

namespace attn {

// (B·T, n_heads·d_head) → (B·n_heads, T, d_head), and back.
Tensor3 split_heads(const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads);
Mat merge_heads(const Tensor3& x, std::size_t B, std::size_t T, std::size_t n_heads);

struct AttentionCache {
    Tensor3 q, k, v;  // (B·h, T, d_head), split
    Tensor3 weights;  // (B·h, T, T), rows sum to 1, zero above the diagonal when causal
    float scale = 1;  // what the forward multiplied q·k by (1/√d_head, or 1 without the division); the backward reuses it
};

// How the scores are formed, for the language-model experiments (Sections 9.2 and 9.6). The defaults
// are Definition 9.1's: scores = q kᵀ / √d_head.
//   scale = false    scores = q kᵀ, the ablation of Section 9.2 (claim C12)
//   bias             (n_heads, T, T) added to the scaled scores of every sequence before the mask and the
//                    softmax, e.g. ALiBi's −m_j (t − i) (positions.hpp). A constant: the backward is unchanged.
struct ScoreOptions {
    bool scale = true;
    const Tensor3* bias = nullptr;
};

// q, k, v (B·T, d_model) → merged head outputs (B·T, d_model); causal unless causal = false. q and k may
// be narrower or wider than v (B·T, n_heads·d_k): each head's scores then have width d_k.
Mat causal_attention_forward(const Mat& q, const Mat& k, const Mat& v, std::size_t B, std::size_t T,
                             std::size_t n_heads, AttentionCache& cache, bool uniform = false, bool causal = true,
                             const ScoreOptions& options = {});
// dout (B·T, d_model) → dq, dk, dv (B·T, d_model); with uniform weights dq = dk = 0. Causal or not, as
// the forward that filled the cache was.
void causal_attention_backward(const Mat& dout, const AttentionCache& cache, std::size_t B, std::size_t T,
                               std::size_t n_heads, bool uniform, Mat& dq, Mat& dk, Mat& dv);

}  // namespace attn
