// Causal multi-head attention on the GPU, Section 9.8: a ladder of kernels in the style of llm.c's
// dev/cuda/attention_forward.cu. All versions take q, k, v (B·h, T, d_head), fp32, and write
// out (B·h, T, d_head) = softmax(q kᵀ / √d_head, causal) v; the CPU reference is
// attn::fast::causal_attention_forward (on merged heads; split_heads/merge_heads below convert).
//
// version 1: naive. One thread per (batch·head, query row), three kernels — scores, softmax, mix — with the
//            (B·h, T, T) scores matrix in global memory between them. Each thread reads every key and
//            value row it needs straight from global memory; nothing is shared between threads.
// version 2: the two products go to cuBLAS (strided-batched SGEMM over the B·h heads), which is as fast as
//            fp32 matrix products get on this device; between them one fused kernel scales, masks and
//            softmaxes each row in place (a block per row, warp-shuffle reductions). Still materialises
//            the (B·h, T, T) matrix, and cuBLAS computes the masked upper triangle too (twice the useful
//            work): the matrix is what runs out of memory first.
// version 3: tiled, FlashAttention's recurrence. A block takes a tile of 64 query rows (staged in shared
//            memory), walks the 64-key tiles up to the diagonal (fully masked tiles are skipped, not
//            computed), stages each key and value tile in shared memory, and keeps per row the online
//            softmax's running max, sum and accumulator — attn::online_softmax_update, the function the CPU
//            tests check — the accumulator in registers, with no spills up to d_head = 128
//            (tools/check_spills.sh). The T × T matrix never exists: memory is O(T·d_head), and the result
//            is the same to rounding.
//
// Kernels: attention_kernels.cuh. Launch shapes and argument checks: launch.hpp. Launches go through
// kernel_launch.cuh, so the unit tests compile this very file on the CPU emulator (tests/common).
#include <cmath>
#include <string>

#include "attention_kernels.cuh"
#include "buffer.hpp"
#include "kernel_launch.cuh"
#include "launch.hpp"
#include "ops.hpp"

namespace attn::gpu {

namespace {
float attention_scale(int d_head) { return 1.0f / std::sqrt(static_cast<float>(d_head)); }

std::string scores_name(int BH, int T) {
    return "the scores (B·h, T, T) = (" + std::to_string(BH) + ", " + std::to_string(T) + ", " + std::to_string(T) + ")";
}

template <int D>
void launch_v3(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head) {
    const std::size_t smem = v3_shared_bytes(D);
    // Over 48 KiB of dynamic shared memory a kernel must opt in (sm_80: up to 163 KiB, sm_90: 227 KiB).
    allow_shared_bytes(kernels::attention_v3_kernel<D>, smem, "attention_v3_kernel");
    const dim3 grid(static_cast<unsigned>(v3_query_tiles(T)), static_cast<unsigned>(BH));
    launch("attention_v3_kernel", kernels::attention_v3_kernel<D>, grid, dim3(kV3Tile), smem, q, k, v, out, T, d_head,
           attention_scale(d_head));
}
}  // namespace

void split_heads(const float* x, float* x_heads, int B, int T, int n_heads, int d_head) {
    check_heads_args("gpu::split_heads", B, T, n_heads, d_head);
    const std::size_t n = static_cast<std::size_t>(B) * T * n_heads * d_head;
    launch("split_heads_kernel", kernels::split_heads_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))),
           dim3(kElementwiseThreads), 0, x, x_heads, B, T, n_heads, d_head);
}

void merge_heads(const float* x_heads, float* x, int B, int T, int n_heads, int d_head) {
    check_heads_args("gpu::merge_heads", B, T, n_heads, d_head);
    const std::size_t n = static_cast<std::size_t>(B) * T * n_heads * d_head;
    launch("merge_heads_kernel", kernels::merge_heads_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))),
           dim3(kElementwiseThreads), 0, x_heads, x, B, T, n_heads, d_head);
}

void attention_v1(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head,
                  float* scores) {
    check_attention_args(AttentionVersion::v1, BH, T, d_head);
    DeviceBuffer own;  // freed on return (cudaFree waits for the kernels that use it)
    if (scores == nullptr) {
        own = DeviceBuffer(static_cast<std::size_t>(BH) * T * T, scores_name(BH, T));
        scores = own.data();
    }
    const dim3 blocks(static_cast<unsigned>(v1_blocks(BH, T)));
    launch("attention_v1_scores", kernels::attention_v1_scores, blocks, dim3(kV1Threads), 0, q, k, scores, BH, T, d_head,
           attention_scale(d_head));
    launch("attention_v1_softmax", kernels::attention_v1_softmax, blocks, dim3(kV1Threads), 0, scores, BH, T);
    launch("attention_v1_mix", kernels::attention_v1_mix, blocks, dim3(kV1Threads), 0, static_cast<const float*>(scores), v,
           out, BH, T, d_head);
}

void attention_v2(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head,
                  float* scores) {
    check_attention_args(AttentionVersion::v2, BH, T, d_head);
    DeviceBuffer own;
    if (scores == nullptr) {
        own = DeviceBuffer(static_cast<std::size_t>(BH) * T * T, scores_name(BH, T));
        scores = own.data();
    }
    const long long head = static_cast<long long>(T) * d_head;  // floats from one head's q (k, v, out) to the next
    const long long matrix = static_cast<long long>(T) * T;     // and from one head's scores to the next
    // scores_h (T, T) = q_h (T, d_head) · k_hᵀ, for every head at once — all T² entries, the masked ones too.
    gemm_strided_batched(Op::as_is, Op::transposed, T, T, d_head, 1.0f, q, d_head, head, k, d_head, head, 0.0f, scores, T, matrix, BH);
    launch("scale_mask_softmax_kernel", kernels::scale_mask_softmax_kernel, dim3(static_cast<unsigned>(v2_softmax_blocks(BH, T))),
           dim3(kSoftmaxThreads), 0, scores, T, attention_scale(d_head));
    // out_h (T, d_head) = weights_h (T, T) · v_h (T, d_head); the masked weights are exact zeros.
    gemm_strided_batched(Op::as_is, Op::as_is, T, d_head, T, 1.0f, scores, T, matrix, v, d_head, head, 0.0f, out, d_head, head, BH);
}

void attention_v3(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head) {
    check_attention_args(AttentionVersion::v3, BH, T, d_head);
    switch (v3_padded_d_head(d_head)) {
        case 16: launch_v3<16>(q, k, v, out, BH, T, d_head); break;
        case 32: launch_v3<32>(q, k, v, out, BH, T, d_head); break;
        case 64: launch_v3<64>(q, k, v, out, BH, T, d_head); break;
        default: launch_v3<128>(q, k, v, out, BH, T, d_head); break;
    }
}

void attention(AttentionVersion version, const float* q, const float* k, const float* v, float* out, int BH, int T,
               int d_head, float* scores) {
    switch (version) {
        case AttentionVersion::v1: attention_v1(q, k, v, out, BH, T, d_head, scores); break;
        case AttentionVersion::v2: attention_v2(q, k, v, out, BH, T, d_head, scores); break;
        case AttentionVersion::v3: attention_v3(q, k, v, out, BH, T, d_head); break;
    }
}

}  // namespace attn::gpu
