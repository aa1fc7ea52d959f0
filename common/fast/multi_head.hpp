// Section 9.3 and 9.4 on the fast engine: multi-head causal self-attention, forward and backward (the
// reference engine's is reference/attention.hpp's SelfAttention).
//
// The model computes q = x W_q, k = x W_k, v = x W_v, each (B·T, d_model). Heads split the feature
// axis: head h owns columns [h·d_head, (h+1)·d_head) with d_head = d_model / n_heads, and runs
// Definition 9.1 on its slice — scaled by √d_head, not √d_model — under the causal mask. The heads'
// outputs are concatenated back to (B·T, d_model) and mixed by W_o (a linear layer, not here).
// One head is n_heads = 1. Options are named (AttentionOptions): `.weights = Weights::uniform` replaces
// the learned scores by equal ones — softmax of the masked zero matrix, the prefix average of Section 9.1,
// the baseline a learned head must beat; `.causal = false` drops the mask, so every position attends to
// all T of its sequence, as an encoder's self-attention does (nn.MultiheadAttention without attn_mask;
// claim C32 compares the two). The backward reads only the cache, so it serves every option.
#pragma once

#include "core/heads.hpp"
#include "core/tensor.hpp"

namespace attn::fast {

// Where the attention weights come from: softmax of the scores q kᵀ, or equal weights (Section 9.1).
enum class Weights { learned, uniform };

struct AttentionCache {
    Weights kind = Weights::learned;
    bool causal = true;  // the forward's mask: the backward skips what it hid
    Mat q, k, v;         // (B·T, h·d_head), as the forward got them; uniform weights keep no q or k
    Tensor3 weights;     // (B·h, T, T), rows sum to 1, zero above the diagonal when causal
    float scale = 1;     // what the forward multiplied q·k by (1/√d_head, or 1 without the division); the backward reuses it
};

// How the weights are formed. The defaults are Definition 9.1's under the causal mask:
// weights = softmax(q kᵀ / √d_head + mask).
//   weights = uniform  equal weights over the allowed positions; q and k are not read
//   causal = false     no mask: every position sees the whole sequence
//   scale = false      scores = q kᵀ, the ablation of Section 9.2 (claim C12)
//   bias               (n_heads, T, T) added to the scaled scores of every sequence before the mask and the
//                      softmax, e.g. ALiBi's −m_j (t − i) (positions.hpp). A constant: the backward is unchanged.
struct AttentionOptions {
    Weights weights = Weights::learned;
    bool causal = true;
    bool scale = true;
    const Tensor3* bias = nullptr;
};

// The causal path's softmax, fused: weights[r] = softmax(scale · scores[r]) over columns 0…t of each row r
// (t = r mod T) and exact zeros after, for n_heads (B·h) stacked (T, T) score matrices. exp is fast/vmath.hpp's,
// so it matches masked_softmax(scale · scores, causal_mask(T)) to float rounding (tests/common/test_vmath.cpp).
void causal_softmax(const float* scores, float* weights, std::size_t n_heads, std::size_t T, float scale);

// q, k, v (B·T, d_model) → merged head outputs (B·T, d_model). q and k may be narrower or wider than v
// (B·T, n_heads·d_k): each head's scores then have width d_k. The cache keeps q, k and v for the backward:
// pass them with std::move when the caller is done with them, and they are not copied. Uniform weights read
// neither q nor k; they may be empty then.
//   causal_attention_forward(q, k, v, B, T, n_heads, cache, {.causal = false});
Mat causal_attention_forward(Mat q, Mat k, Mat v, std::size_t B, std::size_t T,
                             std::size_t n_heads, AttentionCache& cache, const AttentionOptions& options = {});
// dout (B·T, d_model) → dq, dk, dv (B·T, d_model); with uniform weights dq = dk = 0. With the options of
// the forward that filled the cache.
void causal_attention_backward(const Mat& dout, const AttentionCache& cache, std::size_t B, std::size_t T,
                               std::size_t n_heads, Mat& dq, Mat& dk, Mat& dv);

}  // namespace attn::fast
