// The attention for training on the GPU: the forward passes that keep what the backward needs,
// and the backward passes, on split heads; attention_train.hpp is the API, attn::fast::causal_attention_forward /
// _backward (fast/multi_head.hpp) the CPU reference the tests compare with. Two versions:
//
// materialised  Section 9.8's v2 extended to every option and to the backward. cuBLAS (gemm_strided_batched
//               over the B·h heads) writes scores = q kᵀ into the weights buffer; one kernel per row scales,
//               adds ALiBi's bias, masks and softmaxes it in place (exact zeros where masked; uniform weights
//               skip the product and write 1/count); cuBLAS then writes out = weights v. The backward:
//               dv = weightsᵀ dout and dweights = dout vᵀ (cuBLAS), the softmax's backward in place (a kernel),
//               dq = dscores k and dk = dscoresᵀ q (cuBLAS). The (B·h, T, T) weights are kept, and a scratch of
//               the same size is needed: memory O(T²).
// flash         FlashAttention-2 (Dao 2023). The forward is v3 (tiles of 64, a thread per query row, online
//               softmax, d_head padded to 16/32/64/128) with a scale, ALiBi's slopes and each row's lse =
//               log Σ exp(score) kept (B·h, T). The backward (Algorithm 2) recomputes each tile's weights as
//               exp(score − lse): delta = rowsum(dout ⊙ out) (a kernel), then a kernel with a block per key
//               tile writes dk and dv over the query tiles at or after it, and one with a block per query
//               tile writes dq over the key tiles at or before it. Each gradient row has one writer, so
//               there are no atomics and the bits repeat. At d_head > 64 two blocks share a tile, each
//               accumulating 64 of the 128 columns, so that no accumulator spills out of registers (ptxas -v:
//               no stack, no spills, sm_80 and sm_90). Memory O(T·d_head). Causal, learned, d_k = d_v ≤ 128.
//
// Kernels: attention_train_kernels.cuh. Launch shapes and argument checks: launch.hpp. Written once for two
// machines (kernel_launch.cuh): tests/common/gpu_attention_train_on_cpu.cpp compiles this very file on the CPU.
#include <initializer_list>
#include <string>

#include "attention_train.hpp"
#include "attention_train_kernels.cuh"
#include "kernel_launch.cuh"
#include "launch.hpp"
#include "ops.hpp"

namespace attn::gpu {

namespace {
void check_shape(const char* where, bool flash, const AttentionShape& s) {
    check_attention_train_args(where, flash, s.B, s.n_heads, s.T, s.d_k, s.d_v);
    if (flash) {
        const std::string why = flash_refusal(s.causal, s.weighting == Weighting::learned, s.d_k, s.d_v);
        require(why.empty(), where, attention_shape_name(s.B, s.n_heads, s.T, s.d_k, s.d_v) + ": " + why);
    }
}

void require_pointers(const char* where, std::initializer_list<const void*> pointers) {
    for (const void* p : pointers) require(p != nullptr, where, "a device pointer is null");
}

template <int D>
void launch_flash_forward(const float* q, const float* k, const float* v, float* out, float* lse, const AttentionShape& s) {
    const std::size_t smem = flash_forward_shared_bytes(D);
    allow_shared_bytes(kernels::flash_forward_kernel<D>, smem, "flash_forward_kernel");
    const dim3 grid(static_cast<unsigned>(flash_tiles(s.T)), static_cast<unsigned>(s.BH()));
    launch("flash_forward_kernel", kernels::flash_forward_kernel<D>, dim3(grid), dim3(kFlashTile), smem, q, k, v, out, lse, s.T,
           s.d_k, s.n_heads, s.scale, s.alibi_slopes);
}

template <int D>
void launch_flash_backward(const float* q, const float* k, const float* v, const float* lse, const float* dout, float* dq,
                           float* dk, float* dv, const float* delta, const AttentionShape& s) {
    constexpr int C = flash_backward_columns(D);  // accumulated columns per block: D / C blocks per tile
    const std::size_t smem = flash_backward_shared_bytes(D);
    allow_shared_bytes(kernels::flash_backward_dkdv_kernel<D, C>, smem, "flash_backward_dkdv_kernel");
    allow_shared_bytes(kernels::flash_backward_dq_kernel<D, C>, smem, "flash_backward_dq_kernel");
    const dim3 grid(static_cast<unsigned>(flash_backward_blocks_x(s.T, D)), static_cast<unsigned>(s.BH()));
    launch("flash_backward_dkdv_kernel", kernels::flash_backward_dkdv_kernel<D, C>, dim3(grid), dim3(kFlashTile), smem, q, k, v,
           dout, lse, delta, dk, dv, s.T, s.d_k, s.n_heads, s.scale, s.alibi_slopes);
    launch("flash_backward_dq_kernel", kernels::flash_backward_dq_kernel<D, C>, dim3(grid), dim3(kFlashTile), smem, q, k, v, dout,
           lse, delta, dq, s.T, s.d_k, s.n_heads, s.scale, s.alibi_slopes);
}
}  // namespace

// --- materialised --------------------------------------------------------------------------------------------
void attention_forward_materialised(const float* q, const float* k, const float* v, float* out, float* weights,
                                    const AttentionShape& s) {
    const char* where = "gpu::attention_forward_materialised";
    check_shape(where, false, s);
    const bool learned = s.weighting == Weighting::learned;
    require_pointers(where, {v, out, weights});
    if (learned) require_pointers(where, {q, k});
    const int BH = s.BH(), T = s.T;
    const long long head_k = static_cast<long long>(T) * s.d_k, head_v = static_cast<long long>(T) * s.d_v;
    const long long matrix = static_cast<long long>(T) * T;
    // weights_h (T, T) = q_h (T, d_k) · k_hᵀ, the raw scores, for every head at once; uniform weights read none.
    if (learned) gemm_strided_batched(Op::as_is, Op::transposed, T, T, s.d_k, 1.0f, q, s.d_k, head_k, k, s.d_k, head_k, 0.0f, weights, T, matrix, BH);
    const long long rows = static_cast<long long>(BH) * T;
    launch("attention_scores_softmax_kernel", kernels::attention_scores_softmax_kernel,
           dim3(static_cast<unsigned>(train_row_blocks(rows))), dim3(kTrainRowThreads), 0, weights, rows, T, s.n_heads, s.scale,
           s.alibi_slopes, s.causal ? 1 : 0, learned ? 0 : 1);
    // out_h (T, d_v) = weights_h (T, T) · v_h (T, d_v)
    gemm_strided_batched(Op::as_is, Op::as_is, T, s.d_v, T, 1.0f, weights, T, matrix, v, s.d_v, head_v, 0.0f, out, s.d_v, head_v, BH);
}

void attention_backward_materialised(const float* q, const float* k, const float* v, const float* weights,
                                     const float* dout, float* dq, float* dk, float* dv, float* scratch,
                                     const AttentionShape& s) {
    const char* where = "gpu::attention_backward_materialised";
    check_shape(where, false, s);
    const bool learned = s.weighting == Weighting::learned;
    require_pointers(where, {v, weights, dout, dq, dk, dv});
    if (learned) require_pointers(where, {q, k, scratch});
    const int BH = s.BH(), T = s.T;
    const long long head_k = static_cast<long long>(T) * s.d_k, head_v = static_cast<long long>(T) * s.d_v;
    const long long matrix = static_cast<long long>(T) * T;
    // dv_h (T, d_v) = weights_hᵀ (T, T) · dout_h (T, d_v)
    gemm_strided_batched(Op::transposed, Op::as_is, T, s.d_v, T, 1.0f, weights, T, matrix, dout, s.d_v, head_v, 0.0f, dv, s.d_v, head_v, BH);
    if (!learned) {  // the weights do not depend on q or k
        const std::size_t n = static_cast<std::size_t>(BH) * head_k;
        launch("fill_kernel", kernels::fill_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads),
               0, dq, static_cast<long long>(n), 0.0f);
        launch("fill_kernel", kernels::fill_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads),
               0, dk, static_cast<long long>(n), 0.0f);
        return;
    }
    // scratch_h (T, T) = dout_h (T, d_v) · v_hᵀ: dweights, then dscores in place
    gemm_strided_batched(Op::as_is, Op::transposed, T, T, s.d_v, 1.0f, dout, s.d_v, head_v, v, s.d_v, head_v, 0.0f, scratch, T, matrix, BH);
    const long long rows = static_cast<long long>(BH) * T;
    launch("attention_softmax_backward_kernel", kernels::attention_softmax_backward_kernel,
           dim3(static_cast<unsigned>(train_row_blocks(rows))), dim3(kTrainRowThreads), 0, weights, scratch, rows, T, s.scale);
    // dq_h (T, d_k) = dscores_h (T, T) · k_h (T, d_k);  dk_h (T, d_k) = dscores_hᵀ · q_h
    gemm_strided_batched(Op::as_is, Op::as_is, T, s.d_k, T, 1.0f, scratch, T, matrix, k, s.d_k, head_k, 0.0f, dq, s.d_k, head_k, BH);
    gemm_strided_batched(Op::transposed, Op::as_is, T, s.d_k, T, 1.0f, scratch, T, matrix, q, s.d_k, head_k, 0.0f, dk, s.d_k, head_k, BH);
}

// --- flash -----------------------------------------------------------------------------------------------------
bool flash_supports(const AttentionShape& s) {
    return s.B > 0 && s.n_heads > 0 && s.T > 0 && s.d_k > 0 && s.BH() <= 65535 &&
           flash_refusal(s.causal, s.weighting == Weighting::learned, s.d_k, s.d_v).empty();
}

std::size_t device_shared_bytes_per_block() { return shared_bytes_per_block(); }

void attention_forward_flash(const float* q, const float* k, const float* v, float* out, float* lse, const AttentionShape& s) {
    const char* where = "gpu::attention_forward_flash";
    check_shape(where, true, s);
    require_pointers(where, {q, k, v, out, lse});
    switch (v3_padded_d_head(s.d_k)) {
        case 16: launch_flash_forward<16>(q, k, v, out, lse, s); break;
        case 32: launch_flash_forward<32>(q, k, v, out, lse, s); break;
        case 64: launch_flash_forward<64>(q, k, v, out, lse, s); break;
        default: launch_flash_forward<128>(q, k, v, out, lse, s); break;
    }
}

void attention_backward_flash(const float* q, const float* k, const float* v, const float* out, const float* lse,
                              const float* dout, float* dq, float* dk, float* dv, float* delta, const AttentionShape& s) {
    const char* where = "gpu::attention_backward_flash";
    check_shape(where, true, s);
    require_pointers(where, {q, k, v, out, lse, dout, dq, dk, dv, delta});
    const long long rows = static_cast<long long>(s.BH()) * s.T;
    launch("flash_delta_kernel", kernels::flash_delta_kernel,
           dim3(static_cast<unsigned>(elementwise_blocks(static_cast<std::size_t>(rows)))), dim3(kElementwiseThreads), 0, out,
           dout, delta, rows, s.d_v);
    switch (v3_padded_d_head(s.d_k)) {
        case 16: launch_flash_backward<16>(q, k, v, lse, dout, dq, dk, dv, delta, s); break;
        case 32: launch_flash_backward<32>(q, k, v, lse, dout, dq, dk, dv, delta, s); break;
        case 64: launch_flash_backward<64>(q, k, v, lse, dout, dq, dk, dv, delta, s); break;
        default: launch_flash_backward<128>(q, k, v, lse, dout, dq, dk, dv, delta, s); break;
    }
}

}  // namespace attn::gpu
