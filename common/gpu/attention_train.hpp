// Training on the GPU, the attention's side: forward passes that keep what a backward needs, and the
// backward passes, on split heads — what attn::fast::causal_attention_forward / _backward compute on the CPU
// (fast/multi_head.hpp), in two ways:
//
//   materialised  the (B·h, T, T) weights are kept: scores = q kᵀ by cuBLAS, a fused scale + ALiBi + mask +
//                 softmax kernel, out = weights v by cuBLAS. The backward: dv = weightsᵀ dout, dweights =
//                 dout vᵀ (cuBLAS), dscores = scale · weights ⊙ (dweights − rowsum(dweights ⊙ weights)) (a
//                 kernel), dq = dscores k, dk = dscoresᵀ q (cuBLAS). Every option: uniform weights, no mask,
//                 no scale, ALiBi, d_k ≠ d_v.
//   flash         FlashAttention-2: the forward keeps only each row's log-sum-exp L (B·h, T), never the
//                 weights; the backward recomputes each tile's weights from q, k and L. Causal, learned
//                 weights, d_k = d_v ≤ kMaxDHead, with or without the scale and ALiBi.
//
// Layouts: q, k (B·h, T, d_k), v (B·h, T, d_v), out (B·h, T, d_v), row-major; split_heads / merge_heads
// (ops.hpp) convert from the merged (B·T, h·d) rows. Every reduction runs in a fixed order (no float
// atomics): the same inputs give the same bits on every run. Plain C++ on device pointers; the kernels are
// in attention_train_kernels.cuh, the launches in attention_train.cu, and the unit tests run the same
// kernels on the CPU (tests/common/gpu_attention_train_on_cpu.cpp).
#pragma once

#include <cstddef>

#include "launch.hpp"

namespace attn::gpu {

enum class Weighting { learned, uniform };  // uniform: every allowed key weighs 1/(count); q and k unread (may be null)

struct AttentionShape {
    int B = 0, n_heads = 0, T = 0, d_k = 0, d_v = 0;  // B·h = B · n_heads stacked (T, ·) matrices
    Weighting weighting = Weighting::learned;
    bool causal = true;
    float scale = 1.0f;                  // what q·k is multiplied by: 1/√d_k, or 1 without the division
    const float* alibi_slopes = nullptr;  // (n_heads) on the device, or null: adds −m_j (t − i) to head j's scores
                                          // for keys i ≤ t, 0 above the diagonal (attn::alibi_bias's values)
    int BH() const { return B * n_heads; }
};

// --- materialised --------------------------------------------------------------------------------------------
// weights (B·h, T, T): written, rows sum to 1, exact zeros where masked (kept for the backward).
void attention_forward_materialised(const float* q, const float* k, const float* v, float* out, float* weights,
                                    const AttentionShape& s);
// dout → dq, dk (written; zero for uniform weights), dv (written). scratch: (B·h, T, T) floats (unused, may be
// null, for uniform weights). weights: what the forward wrote.
void attention_backward_materialised(const float* q, const float* k, const float* v, const float* weights,
                                     const float* dout, float* dq, float* dk, float* dv, float* scratch,
                                     const AttentionShape& s);

// --- flash (FlashAttention-2) -----------------------------------------------------------------------------------
// Whether the flash path takes this shape (causal, learned, d_k = d_v ≤ kMaxDHead).
bool flash_supports(const AttentionShape& s);
// The most shared memory one block may opt in to on this device (cudaDevAttrMaxSharedMemoryPerBlockOptin):
// 232,448 bytes on an H100 or H200, 166,912 on an A100, 101,376 on most consumer cards. The flash path's blocks
// need flash_shared_bytes(d_k) (launch.hpp); where that is more, the automatic path takes the materialised one.
std::size_t device_shared_bytes_per_block();
// lse (B·h, T): each row's log Σ exp(score) over its allowed keys, kept for the backward.
void attention_forward_flash(const float* q, const float* k, const float* v, float* out, float* lse,
                             const AttentionShape& s);
// dout → dq, dk, dv (written). out and lse: what the forward wrote. delta: (B·h, T) scratch for rowsum(dout ⊙ out).
// The shape is checked as the forward's: an unsupported one throws attn::Error saying why (flash_supports).
void attention_backward_flash(const float* q, const float* k, const float* v, const float* out, const float* lse,
                              const float* dout, float* dq, float* dk, float* dv, float* delta, const AttentionShape& s);

}  // namespace attn::gpu
