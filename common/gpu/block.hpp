// Section 9.8: the pre-norm Transformer block, forward, on the GPU — the CPU model's block (fast/block.hpp)
// computed with the kernels and cuBLAS products of ops.hpp:
//
//   n1 = LN_1(x)                                        layernorm, one warp per row
//   q, k, v = n1 W_{q,k,v} + b_{q,k,v}                 three cuBLAS SGEMMs + bias adds      (N, d)
//   heads: (N, d) → (B·h, T, d_head); attention v1/v2/v3 (causal, 1/√d_head); back to (N, d)
//   a = x + (mixed W_o + b_o)                           SGEMM, bias add, residual add
//   n2 = LN_2(a)
//   y = a + (gelu(n2 W_1 + b_1) W_2 + b_2)              SGEMM, bias, GELU (erf), SGEMM, bias, residual
//
// N = B·T rows. Plain C++ on device pointers: no CUDA types, no xtensor (the bridge to the CPU model's
// matrices is transformer_gpu.hpp).
#pragma once

#include "buffer.hpp"
#include "launch.hpp"

namespace attn::gpu {

struct BlockDims {
    int d_model = 0, n_heads = 0, d_ff = 0;
    int d_head() const { return n_heads > 0 ? d_model / n_heads : 0; }
};

// The sixteen tensors of one block on the device, named and shaped as the CPU model's ("block0.W_q", …):
// y = x W + b with W (in, out) row-major.
struct BlockWeights {
    DeviceBuffer ln1_gain, ln1_bias;  // (1, d)
    DeviceBuffer W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o;  // (d, d) and (1, d)
    DeviceBuffer ln2_gain, ln2_bias;  // (1, d)
    DeviceBuffer W_1, b_1;            // (d, d_ff), (1, d_ff)
    DeviceBuffer W_2, b_2;            // (d_ff, d), (1, d)
};

// Every intermediate of one forward, kept on the device so that each can be set beside the CPU's.
struct BlockActivations {
    DeviceBuffer n1;                                    // (N, d)      LN_1(x)
    DeviceBuffer q, k, v;                               // (N, d)
    DeviceBuffer q_heads, k_heads, v_heads, out_heads;  // (B·h, T, d_head)
    DeviceBuffer mixed;                                 // (N, d)      the heads' outputs, merged (before W_o)
    DeviceBuffer a;                                     // (N, d)      x + mixed W_o + b_o
    DeviceBuffer n2;                                    // (N, d)      LN_2(a)
    DeviceBuffer pre_ff, hidden;                        // (N, d_ff)   n2 W_1 + b_1, and its GELU
    DeviceBuffer y;                                     // (N, d)      a + hidden W_2 + b_2
};

// x (B·T, d_model) on the device → act.y; allocates the activations it needs (kept for the next call of
// the same shape) and fills them with NaN before the kernels write them. Checks every weight's size against dims. Returns before the device finishes.
void block_forward(const BlockWeights& w, const BlockDims& dims, const float* x, int B, int T, AttentionVersion version,
                   BlockActivations& act);

// Checks a block's shape: positive sizes, n_heads divides d_model, d_head within the version's limit.
void check_block_dims(const BlockDims& dims, AttentionVersion version);

}  // namespace attn::gpu
