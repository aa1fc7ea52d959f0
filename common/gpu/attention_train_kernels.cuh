// The attention's training kernels, device code only (attention_train.cu launches them and lists the two
// paths; attention_train.hpp is the API):
//
//   materialised  attention_scores_softmax_kernel   scale + ALiBi + mask + softmax of each row, in place
//                 attention_softmax_backward_kernel dscores = scale · weights ⊙ (dweights − rowsum(dweights ⊙ weights))
//                 fill_kernel                       dq = dk = 0 for uniform weights
//   flash         flash_forward_kernel<D>           v3's tiles and online softmax, plus scale, ALiBi, lse per row
//                 flash_delta_kernel                delta = rowsum(dout ⊙ out)
//                 flash_backward_dkdv_kernel<D, C>  a block per key tile: dk, dv over the query tiles at or after it
//                 flash_backward_dq_kernel<D, C>    a block per query tile: dq over the key tiles at or before it
//                                                   (C of the D columns per block: D / C blocks per tile)
//
// Layouts (fp32, row-major): q, k (B·h, T, d_k), v, out, dout (B·h, T, d_v), weights (B·h, T, T), lse and
// delta (B·h, T). Head bh = b·n_heads + j takes ALiBi slope m_j: its score of query t and key i gets
// −m_j (t − i) for i ≤ t and 0 above the diagonal (attn::alibi_bias's values; masked anyway when causal).
//
// Determinism: no atomics. Every sum has one owner thread (or one warp's butterfly) and runs in a fixed
// order; the flash backward's dk, dv and dq each have one writer (FlashAttention-2's split into a key-tile
// kernel and a query-tile kernel, instead of FlashAttention-2's atomicAdd on dq).
//
// Like attention_kernels.cuh, only CUDA built-ins, __syncthreads, warp shuffles, shared memory and
// expf/logf/fmaxf: the unit tests run this source on the CPU (tests/common/cuda_on_cpu.hpp).
#pragma once

#include "math/online_softmax.hpp"
#include "launch.hpp"
#include "reductions.cuh"

#ifndef ATTN_EXTERN_SHARED
#define ATTN_EXTERN_SHARED(type, name) extern __shared__ type name[]
#endif
#ifndef ATTN_UNROLL
#if defined(__CUDACC__)
#define ATTN_UNROLL _Pragma("unroll")
#else
#define ATTN_UNROLL
#endif
#endif

namespace attn::gpu::kernels {

// ALiBi's bias of query t and key i for a head of slope m: −m (t − i) below the diagonal, 0 on and above it.
__device__ inline float alibi_score_bias(float slope, int t, int i) {
    return i <= t ? -slope * static_cast<float>(t - i) : 0.0f;
}

// x[0..n) = value, grid-stride.
__global__ void fill_kernel(float* x, long long n, float value) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < n; idx += stride) x[idx] = value;
}

// --- materialised -------------------------------------------------------------------------------------------
// One warp per row r = bh·T + t of the (B·h, T, T) matrix, kTrainRowsPerBlock rows per block. In place: the row
// holds q_t · k_i (cuBLAS) on entry and the weights on exit:
//   learned: s_i = scale · (q_t · k_i) + bias_i over the allowed keys (i ≤ t when causal, all T otherwise),
//            weights_i = exp(s_i − max) / Σ, exact zeros elsewhere;
//   uniform: the row is not read; weights_i = 1 / (allowed count) on the allowed keys, zeros elsewhere.
// A warp returns as a whole (no __syncthreads here; the shuffles are within the warp).
__global__ void attention_scores_softmax_kernel(float* weights, long long rows, int T, int n_heads, float scale,
                                                const float* alibi_slopes, int causal, int uniform) {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const long long row = static_cast<long long>(blockIdx.x) * kTrainRowsPerBlock + threadIdx.x / kWarp;
    if (row >= rows) return;
    const int t = static_cast<int>(row % T);
    const int allowed = causal ? t + 1 : T;  // keys 0 … allowed − 1
    float* w = weights + row * T;
    if (uniform) {
        const float u = 1.0f / static_cast<float>(allowed);
        for (int i = lane; i < T; i += kWarp) w[i] = i < allowed ? u : 0.0f;
        return;
    }
    const float slope = alibi_slopes != nullptr ? alibi_slopes[(row / T) % n_heads] : 0.0f;
    const bool alibi = alibi_slopes != nullptr;
    float m = -INFINITY;
    for (int i = lane; i < allowed; i += kWarp) m = fmaxf(m, w[i] * scale + (alibi ? alibi_score_bias(slope, t, i) : 0.0f));
    m = warp_max(m);
    float sum = 0.0f;
    for (int i = lane; i < allowed; i += kWarp) sum += expf(w[i] * scale + (alibi ? alibi_score_bias(slope, t, i) : 0.0f) - m);
    sum = warp_sum(sum);
    const float inv = 1.0f / sum;  // ≥ 1 term (the key with the max): never 0
    // Each lane rewrites the columns it alone read, after the warp's sums.
    for (int i = lane; i < T; i += kWarp)
        w[i] = i < allowed ? expf(w[i] * scale + (alibi ? alibi_score_bias(slope, t, i) : 0.0f) - m) * inv : 0.0f;
}

// One warp per row, in place: g holds dweights = dout vᵀ on entry and dscores on exit,
//   dscores_i = (weights_i (dweights_i − Σ_k dweights_k weights_k)) · scale
// (attn::softmax_rows_backward, then the forward's scale). Masked entries have weights 0, so dscores 0.
__global__ void attention_softmax_backward_kernel(const float* weights, float* g, long long rows, int T, float scale) {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const long long row = static_cast<long long>(blockIdx.x) * kTrainRowsPerBlock + threadIdx.x / kWarp;
    if (row >= rows) return;
    const float* w = weights + row * T;
    float* gr = g + row * T;
    float dot = 0.0f;
    for (int i = lane; i < T; i += kWarp) dot += gr[i] * w[i];
    dot = warp_sum(dot);
    for (int i = lane; i < T; i += kWarp) gr[i] = (w[i] * (gr[i] - dot)) * scale;
}

// Stages rows row0 … row0 + kFlashTile − 1 of one or two (T, d_head) matrices of a head (base: the head's first
// element) into shared memory with row stride S — D for a tile every thread reads whole, D + 1 for rows each
// owned by one thread (odd strides: no bank conflicts) — with zeros past T and past d_head, which change no dot
// product. Every thread of the block takes part.
template <int D, int S>
__device__ __forceinline__ void stage_rows(const float* a, float* a_shared, long long base, int row0, int T, int d_head) {
    for (int e = threadIdx.x; e < kFlashTile * D; e += kFlashTile) {
        const int r = e / D, c = e % D;
        const bool inside = row0 + r < T && c < d_head;
        a_shared[r * S + c] = inside ? a[base + static_cast<long long>(row0 + r) * d_head + c] : 0.0f;
    }
}
template <int D, int S>
__device__ __forceinline__ void stage_rows(const float* a, const float* b, float* a_shared, float* b_shared, long long base,
                                           int row0, int T, int d_head) {
    for (int e = threadIdx.x; e < kFlashTile * D; e += kFlashTile) {
        const int r = e / D, c = e % D;
        const bool inside = row0 + r < T && c < d_head;
        const long long at = base + static_cast<long long>(row0 + r) * d_head + c;
        a_shared[r * S + c] = inside ? a[at] : 0.0f;
        b_shared[r * S + c] = inside ? b[at] : 0.0f;
    }
}

// --- flash: forward -----------------------------------------------------------------------------------------
// attention_v3_kernel (attention_kernels.cuh) with three changes: the score is scale · (q_t · k_i) plus
// ALiBi's bias (q is staged unscaled, so the backward recomputes the very same expression), the grid's y is
// bh so the head's slope is slopes[bh mod n_heads], and each row also writes lse_t = m + log l, its
// log Σ_i exp(s_i) over the allowed keys — all the backward needs to rebuild weights_i = exp(s_i − lse_t).
// Shared memory: flash_forward_shared_bytes(D), v3's layout.
template <int D>
__global__ void __launch_bounds__(kFlashTile) flash_forward_kernel(const float* q, const float* k, const float* v,
                                                                   float* out, float* lse, int T, int d_head, int n_heads,
                                                                   float scale, const float* alibi_slopes) {
    ATTN_EXTERN_SHARED(float, smem);
    float* k_tile = smem;                              // (kFlashTile, D)
    float* v_tile = k_tile + kFlashTile * D;           // (kFlashTile, D)
    float* q_rows = v_tile + kFlashTile * D;           // (kFlashTile, D + 1), one row per thread
    float* s_rows = q_rows + kFlashTile * (D + 1);     // (kFlashTile, kFlashTile + 1), one row per thread
    const int tid = threadIdx.x;
    const int q_tile = static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x);  // heaviest tiles first
    const long long bh = blockIdx.y;
    const long long base = bh * T * d_head;
    const float slope = alibi_slopes != nullptr ? alibi_slopes[bh % n_heads] : 0.0f;
    const int q0 = q_tile * kFlashTile;
    const int row = q0 + tid;
    const bool active = row < T;

    stage_rows<D, D + 1>(q, q_rows, base, q0, T, d_head);
    const float* q_row = q_rows + tid * (D + 1);
    float acc[D];
ATTN_UNROLL
    for (int c = 0; c < D; ++c) acc[c] = 0.0f;
    OnlineSoftmax state = online_softmax_start();
    float* s = s_rows + tid * (kFlashTile + 1);

    for (int k_tile_index = 0; k_tile_index <= q_tile; ++k_tile_index) {
        const int k0 = k_tile_index * kFlashTile;
        __syncthreads();  // the previous tiles are read (and the query tile written)
        stage_rows<D, D>(k, v, k_tile, v_tile, base, k0, T, d_head);
        __syncthreads();
        if (active) {
            for (int j = 0; j < kFlashTile; ++j) {
                float dot = 0.0f;
ATTN_UNROLL
                for (int c = 0; c < D; ++c) dot += q_row[c] * k_tile[j * D + c];
                const int key = k0 + j;
                s[j] = key <= row ? dot * scale - slope * static_cast<float>(row - key) : -INFINITY;  // causal; keys ≥ T are > row
            }
            state = online_softmax_update(state, s, kFlashTile, v_tile, D, acc, D);
        }
    }
    if (!active) return;
    online_softmax_finish(state, acc, acc, D);
ATTN_UNROLL
    for (int c = 0; c < D; ++c)
        if (c < d_head) out[base + static_cast<long long>(row) * d_head + c] = acc[c];
    lse[bh * T + row] = state.m + logf(state.l);  // l ≥ 1: the max's own term
}

// --- flash: backward (FlashAttention-2, Dao 2023, Algorithm 2, split in two kernels without atomics) -------
// With p_ti = exp(s_ti − lse_t) (the forward's weights, recomputed), dp_ti = dout_t · v_i and
// delta_t = Σ_i p_ti dp_ti = dout_t · out_t:
//   dv_i = Σ_t p_ti dout_t,   ds_ti = p_ti (dp_ti − delta_t),   dk_i = scale Σ_t ds_ti q_t,   dq_t = scale Σ_i ds_ti k_i.

// delta_r = Σ_c dout[r, c] · out[r, c], one thread per row r of (B·h·T, d_head), c in order.
__global__ void flash_delta_kernel(const float* out, const float* dout, float* delta, long long rows, int d_head) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
        float sum = 0.0f;
        for (int c = 0; c < d_head; ++c) sum += dout[r * d_head + c] * out[r * d_head + c];
        delta[r] = sum;
    }
}

// Block (blockIdx.x = key tile, blockIdx.y = bh), one thread per key i of the tile, its k_i and v_i staged
// as its own padded row of shared memory. The block walks the query tiles from its own (the diagonal) to the
// last — the ones before it see none of its keys — staging each tile's q, dout, lse and delta; thread i adds
// query t's terms for t = i … in order, into dk_i and dv_i in registers (the only writer of both: no atomics).
// Key tile 0 sees every query tile, so the low tiles are the heavy ones, and they are launched first.
// Registers: the accumulators are C of the D columns (flash_backward_columns(D)): a block computes p and ds
// from whole rows but accumulates only its C columns, and D / C blocks share a key tile (blockIdx.x =
// tile · D / C + part). At D = 128 two accumulators of 128 floats would not fit in registers (ptxas put them
// on the stack); two blocks of 64 columns each recompute the dot products instead.
template <int D, int C>
__global__ void __launch_bounds__(kFlashTile) flash_backward_dkdv_kernel(const float* q, const float* k, const float* v,
                                                                         const float* dout, const float* lse,
                                                                         const float* delta, float* dk, float* dv, int T,
                                                                         int d_head, int n_heads, float scale,
                                                                         const float* alibi_slopes) {
    ATTN_EXTERN_SHARED(float, smem);
    float* k_rows = smem;                               // (kFlashTile, D + 1), one row per thread
    float* v_rows = k_rows + kFlashTile * (D + 1);      // (kFlashTile, D + 1), one row per thread
    float* q_tile = v_rows + kFlashTile * (D + 1);      // (kFlashTile, D)
    float* dout_tile = q_tile + kFlashTile * D;         // (kFlashTile, D)
    float* lse_tile = dout_tile + kFlashTile * D;       // (kFlashTile)
    float* delta_tile = lse_tile + kFlashTile;          // (kFlashTile)
    const int tid = threadIdx.x;
    const int k_tile_index = static_cast<int>(blockIdx.x) / (D / C);
    const int c0 = static_cast<int>(blockIdx.x) % (D / C) * C;  // this block's columns: c0 … c0 + C − 1
    const int n_tiles = static_cast<int>(gridDim.x) / (D / C);
    const long long bh = blockIdx.y;
    const long long base = bh * T * d_head;
    const float slope = alibi_slopes != nullptr ? alibi_slopes[bh % n_heads] : 0.0f;
    const int k0 = k_tile_index * kFlashTile;
    const int key = k0 + tid;
    const bool active = key < T;

    stage_rows<D, D + 1>(k, v, k_rows, v_rows, base, k0, T, d_head);
    const float* k_row = k_rows + tid * (D + 1);
    const float* v_row = v_rows + tid * (D + 1);
    float dk_acc[C], dv_acc[C];
ATTN_UNROLL
    for (int c = 0; c < C; ++c) dk_acc[c] = dv_acc[c] = 0.0f;

    for (int q_tile_index = k_tile_index; q_tile_index < n_tiles; ++q_tile_index) {
        const int q0 = q_tile_index * kFlashTile;
        __syncthreads();  // the previous query tile is read (and the key rows written)
        stage_rows<D, D>(q, dout, q_tile, dout_tile, base, q0, T, d_head);
        {
            const bool inside = q0 + tid < T;
            lse_tile[tid] = inside ? lse[bh * T + q0 + tid] : 0.0f;
            delta_tile[tid] = inside ? delta[bh * T + q0 + tid] : 0.0f;
        }
        __syncthreads();
        if (active) {
            for (int r = 0; r < kFlashTile; ++r) {
                const int t = q0 + r;
                if (t >= T) break;
                if (t < key) continue;  // causal: query t sees keys ≤ t
                const float* q_t = q_tile + r * D;
                const float* dout_t = dout_tile + r * D;
                float dot = 0.0f, dp = 0.0f;
ATTN_UNROLL
                for (int c = 0; c < D; ++c) {
                    dot += q_t[c] * k_row[c];
                    dp += dout_t[c] * v_row[c];
                }
                const float p = expf(dot * scale - slope * static_cast<float>(t - key) - lse_tile[r]);
                const float ds = p * (dp - delta_tile[r]);
ATTN_UNROLL
                for (int c = 0; c < C; ++c) {
                    dv_acc[c] += p * dout_t[c0 + c];
                    dk_acc[c] += ds * q_t[c0 + c];
                }
            }
        }
    }
    if (!active) return;
ATTN_UNROLL
    for (int c = 0; c < C; ++c)
        if (c0 + c < d_head) {
            dk[base + static_cast<long long>(key) * d_head + c0 + c] = dk_acc[c] * scale;
            dv[base + static_cast<long long>(key) * d_head + c0 + c] = dv_acc[c];
        }
}

// Block (query tile, bh), one thread per query t, its q_t and dout_t staged as its own padded row, lse_t and
// delta_t in registers. The block walks the key tiles 0 … its own (those after it are fully masked), staging
// k and v; thread t adds key i's term for i = 0 … t in order into dq_t in registers (its only writer).
// The last query tiles see the most keys and are launched first, as in the forward. Like the dk/dv kernel,
// a block accumulates C of the D columns (blockIdx.x = (tiles − 1 − tile) · D / C + part).
template <int D, int C>
__global__ void __launch_bounds__(kFlashTile) flash_backward_dq_kernel(const float* q, const float* k, const float* v,
                                                                       const float* dout, const float* lse,
                                                                       const float* delta, float* dq, int T, int d_head,
                                                                       int n_heads, float scale,
                                                                       const float* alibi_slopes) {
    ATTN_EXTERN_SHARED(float, smem);
    float* q_rows = smem;                                // (kFlashTile, D + 1), one row per thread
    float* dout_rows = q_rows + kFlashTile * (D + 1);    // (kFlashTile, D + 1), one row per thread
    float* k_tile = dout_rows + kFlashTile * (D + 1);    // (kFlashTile, D)
    float* v_tile = k_tile + kFlashTile * D;             // (kFlashTile, D)
    const int tid = threadIdx.x;
    const int q_tile_index = static_cast<int>(gridDim.x) / (D / C) - 1 - static_cast<int>(blockIdx.x) / (D / C);
    const int c0 = static_cast<int>(blockIdx.x) % (D / C) * C;  // this block's columns: c0 … c0 + C − 1
    const long long bh = blockIdx.y;
    const long long base = bh * T * d_head;
    const float slope = alibi_slopes != nullptr ? alibi_slopes[bh % n_heads] : 0.0f;
    const int q0 = q_tile_index * kFlashTile;
    const int t = q0 + tid;
    const bool active = t < T;

    stage_rows<D, D + 1>(q, dout, q_rows, dout_rows, base, q0, T, d_head);
    const float* q_row = q_rows + tid * (D + 1);
    const float* dout_row = dout_rows + tid * (D + 1);
    const float lse_t = active ? lse[bh * T + t] : 0.0f;
    const float delta_t = active ? delta[bh * T + t] : 0.0f;
    float dq_acc[C];
ATTN_UNROLL
    for (int c = 0; c < C; ++c) dq_acc[c] = 0.0f;

    for (int k_tile_index = 0; k_tile_index <= q_tile_index; ++k_tile_index) {
        const int k0 = k_tile_index * kFlashTile;
        __syncthreads();
        stage_rows<D, D>(k, v, k_tile, v_tile, base, k0, T, d_head);
        __syncthreads();
        if (active) {
            for (int j = 0; j < kFlashTile; ++j) {
                const int key = k0 + j;
                if (key > t) break;  // causal (and keys ≥ T are > t)
                const float* k_i = k_tile + j * D;
                const float* v_i = v_tile + j * D;
                float dot = 0.0f, dp = 0.0f;
ATTN_UNROLL
                for (int c = 0; c < D; ++c) {
                    dot += q_row[c] * k_i[c];
                    dp += dout_row[c] * v_i[c];
                }
                const float p = expf(dot * scale - slope * static_cast<float>(t - key) - lse_t);
                const float ds = p * (dp - delta_t);
ATTN_UNROLL
                for (int c = 0; c < C; ++c) dq_acc[c] += ds * k_i[c0 + c];
            }
        }
    }
    if (!active) return;
ATTN_UNROLL
    for (int c = 0; c < C; ++c)
        if (c0 + c < d_head) dq[base + static_cast<long long>(t) * d_head + c0 + c] = dq_acc[c] * scale;
}

}  // namespace attn::gpu::kernels
