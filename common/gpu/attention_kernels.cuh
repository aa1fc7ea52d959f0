// The attention kernels of Section 9.8, device code only: the v1 → v3 ladder (attention.cu launches them
// and says what each version changes) and the head split/merge they run between.
//
// Layouts (fp32, row-major): x (B·T, d_model) with head h owning columns [h·d_head, (h+1)·d_head), as on
// the CPU (fast/multi_head.hpp); the kernels take the heads split, q, k, v and out (B·h, T, d_head), and
// v1/v2 a scores matrix (B·h, T, T). Causal throughout: query i sees keys j ≤ i, scaled by 1/√d_head.
//
// The kernels use nothing but CUDA's built-in indices, __syncthreads, warp shuffles, shared memory and
// expf/fmaxf, so the unit tests also run this very source on the CPU (tests/common/cuda_on_cpu.hpp).
#pragma once

#include "math/online_softmax.hpp"
#include "launch.hpp"
#include "reductions.cuh"

// Dynamic shared memory, sized at launch. A macro so the CPU runner can supply its own buffer.
#ifndef ATTN_EXTERN_SHARED
#define ATTN_EXTERN_SHARED(type, name) extern __shared__ type name[]
#endif
// Full unrolling of a loop with a compile-time trip count (nvcc); nothing for a host compiler.
#if defined(__CUDACC__)
#define ATTN_UNROLL _Pragma("unroll")
#else
#define ATTN_UNROLL
#endif

namespace attn::gpu::kernels {

// --- heads ----------------------------------------------------------------------------------------------------
// (B·T, n_heads·d_head) → (B·h, T, d_head): out[(b·h + hd, t, c)] = x[b·T + t, hd·d_head + c]. One thread per
// output element; consecutive threads write consecutive floats and read runs of d_head.
__global__ void split_heads_kernel(const float* x, float* out, int B, int T, int n_heads, int d_head) {
    const long long n = static_cast<long long>(B) * T * n_heads * d_head;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int c = static_cast<int>(idx % d_head);
        const long long r = idx / d_head;  // (b·h + hd)·T + t
        const int t = static_cast<int>(r % T);
        const long long bh = r / T;
        const int hd = static_cast<int>(bh % n_heads);
        const long long b = bh / n_heads;
        out[idx] = x[(b * T + t) * (static_cast<long long>(n_heads) * d_head) + static_cast<long long>(hd) * d_head + c];
    }
}
// The inverse: (B·h, T, d_head) → (B·T, n_heads·d_head). One thread per output element.
__global__ void merge_heads_kernel(const float* xs, float* out, int B, int T, int n_heads, int d_head) {
    const long long d_model = static_cast<long long>(n_heads) * d_head;
    const long long n = static_cast<long long>(B) * T * d_model;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const long long row = idx / d_model;  // b·T + t
        const int col = static_cast<int>(idx % d_model);
        const int hd = col / d_head, c = col % d_head;
        const long long b = row / T;
        const int t = static_cast<int>(row % T);
        out[idx] = xs[((b * n_heads + hd) * T + t) * d_head + c];
    }
}

// --- v1: naive, one thread per (batch·head, query row), three passes --------------------------------------
// Thread idx = bh·T + i owns query row i of head bh, which is also row idx of q, out and scores.

// Pass 1: scores[bh, i, j] = q_i · k_j / √d_head for j ≤ i. The upper triangle is allocated and never touched.
__global__ void attention_v1_scores(const float* q, const float* k, float* scores, int BH, int T, int d_head,
                                    float scale) {
    const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= static_cast<long long>(BH) * T) return;
    const long long bh = idx / T;
    const int i = static_cast<int>(idx % T);
    float q_i[kMaxDHead];  // this thread's query row, read once
    for (int c = 0; c < d_head; ++c) q_i[c] = q[idx * d_head + c];
    const float* k_bh = k + bh * T * d_head;
    float* s = scores + idx * T;
    for (int j = 0; j <= i; ++j) {
        const float* k_j = k_bh + static_cast<long long>(j) * d_head;  // the same key for every thread of a warp
        float dot = 0.0f;
        for (int c = 0; c < d_head; ++c) dot += q_i[c] * k_j[c];
        s[j] = dot * scale;
    }
}

// Pass 2: each row of scores → weights, in place: max, Σ exp(s − max), divide. Keys j ≤ i only.
__global__ void attention_v1_softmax(float* scores, int BH, int T) {
    const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= static_cast<long long>(BH) * T) return;
    const int i = static_cast<int>(idx % T);
    float* s = scores + idx * T;
    float m = -INFINITY;
    for (int j = 0; j <= i; ++j) m = fmaxf(m, s[j]);
    float sum = 0.0f;
    for (int j = 0; j <= i; ++j) {
        const float e = expf(s[j] - m);
        s[j] = e;
        sum += e;
    }
    const float inv = 1.0f / sum;  // ≥ 1 term (key i itself): never 0
    for (int j = 0; j <= i; ++j) s[j] *= inv;
}

// Pass 3: out_i = Σ_{j ≤ i} weights[i, j] v_j, accumulated in a per-thread array of d_head floats.
__global__ void attention_v1_mix(const float* weights, const float* v, float* out, int BH, int T, int d_head) {
    const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= static_cast<long long>(BH) * T) return;
    const long long bh = idx / T;
    const int i = static_cast<int>(idx % T);
    float acc[kMaxDHead];
    for (int c = 0; c < d_head; ++c) acc[c] = 0.0f;
    const float* w = weights + idx * T;
    const float* v_bh = v + bh * T * d_head;
    for (int j = 0; j <= i; ++j) {
        const float w_ij = w[j];
        const float* v_j = v_bh + static_cast<long long>(j) * d_head;
        for (int c = 0; c < d_head; ++c) acc[c] += w_ij * v_j[c];
    }
    for (int c = 0; c < d_head; ++c) out[idx * d_head + c] = acc[c];
}

// --- v2: the fused scale + mask + softmax between two cuBLAS products ------------------------------------
// One block per row (bh, i) of the (B·h, T, T) scores that cuBLAS wrote as q kᵀ (all T columns, the
// masked ones too). In place: weights[j] = exp(scale·s_j − m) / Σ for j ≤ i and 0 for j > i, so that the
// following product weights·v (again over all T columns) adds nothing from the future.
__global__ void scale_mask_softmax_kernel(float* scores, int T, float scale) {
    const long long row = blockIdx.x;  // bh·T + i
    const int i = static_cast<int>(row % T);
    const int allowed = i + 1;  // keys 0..i
    float* s = scores + row * T;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < allowed; j += blockDim.x) m = fmaxf(m, s[j] * scale);
    m = block_max(m);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < allowed; j += blockDim.x) sum += expf(s[j] * scale - m);
    sum = block_sum(sum);
    const float inv = 1.0f / sum;
    // Each j is read and written by the one thread that owns it, after every thread has finished the sums.
    for (int j = threadIdx.x; j < T; j += blockDim.x) s[j] = j < allowed ? expf(s[j] * scale - m) * inv : 0.0f;
}

// --- v3: tiled causal attention with the online softmax (FlashAttention's recurrence) ---------------------
// Block (blockIdx.x, blockIdx.y = bh) takes one query tile of kV3Tile rows, one row per thread, and walks the
// key tiles 0..(its own) — the tiles right of the diagonal are fully masked and skipped. First the block
// copies its query tile, scaled by 1/√d_head, into shared memory. Then per key tile:
//   1. the block copies the key and value tiles (kV3Tile, D) into shared memory, zero-padded past T and d_head;
//   2. each thread computes its row's kV3Tile scores (−∞ where j > i) into its own row of shared memory;
//   3. each thread folds that tile into its running (max m, sum l, accumulator acc) with
//      attn::online_softmax_update — the same function, line for line, that the CPU tiled attention runs
//      and the CPU tests check (math/online_softmax.hpp);
// and after the last tile out_i = acc / l (online_softmax_finish). Nothing of size T × T exists: shared
// memory is v3_shared_bytes(D) per block, whatever T is. The heaviest query tiles (the last rows, which see
// the most keys) are launched first so the grid's tail is light.
//
// Registers: acc (D floats) is the only array a thread keeps. Its query row lives in shared memory: at
// D = 128 the row and acc together would be 256 floats, past the 255 registers a thread can have, and
// ptxas would spill the rest to local memory (off-chip; tools/check_spills.sh fails the build's tests on it).
template <int D>
__global__ void __launch_bounds__(kV3Tile) attention_v3_kernel(const float* q, const float* k, const float* v, float* out,
                                                               int T, int d_head, float scale) {
    ATTN_EXTERN_SHARED(float, smem);
    float* k_tile = smem;                            // (kV3Tile, D)
    float* v_tile = k_tile + kV3Tile * D;            // (kV3Tile, D)
    float* q_rows = v_tile + kV3Tile * D;            // (kV3Tile, D + 1), one row per thread
    float* s_rows = q_rows + kV3Tile * (D + 1);      // (kV3Tile, kV3Tile + 1), one row per thread
    const int tid = threadIdx.x;
    const int q_tile = static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x);
    const long long base = static_cast<long long>(blockIdx.y) * T * d_head;  // head bh's (T, d_head) slice
    const int q0 = q_tile * kV3Tile;
    const int row = q0 + tid;                 // this thread's query
    const bool active = row < T;              // threads past T only help with the copies

    // The query tile, q / √d_head, zero-padded; consecutive threads read consecutive floats. The first
    // barrier of the loop below orders these writes before any thread reads its row.
    for (int e = tid; e < kV3Tile * D; e += kV3Tile) {
        const int r = e / D, c = e % D;
        q_rows[r * (D + 1) + c] = (q0 + r < T && c < d_head) ? q[base + static_cast<long long>(q0 + r) * d_head + c] * scale : 0.0f;
    }
    const float* q_row = q_rows + tid * (D + 1);
    float acc[D];  // Σ_j exp(s_j − m) v_j over the keys so far
ATTN_UNROLL
    for (int c = 0; c < D; ++c) acc[c] = 0.0f;
    OnlineSoftmax state = online_softmax_start();
    float* s = s_rows + tid * (kV3Tile + 1);

    for (int k_tile_index = 0; k_tile_index <= q_tile; ++k_tile_index) {
        const int k0 = k_tile_index * kV3Tile;
        __syncthreads();  // everyone is done reading the previous tiles (and has written the query tile)
        for (int e = tid; e < kV3Tile * D; e += kV3Tile) {
            const int r = e / D, c = e % D;
            const int key = k0 + r;
            const bool inside = key < T && c < d_head;
            const long long at = base + static_cast<long long>(key) * d_head + c;
            k_tile[e] = inside ? k[at] : 0.0f;
            v_tile[e] = inside ? v[at] : 0.0f;
        }
        __syncthreads();
        if (active) {
            for (int j = 0; j < kV3Tile; ++j) {
                float dot = 0.0f;
ATTN_UNROLL
                for (int c = 0; c < D; ++c) dot += q_row[c] * k_tile[j * D + c];  // k: one address per warp, a broadcast
                s[j] = k0 + j <= row ? dot : -INFINITY;  // causal; keys ≥ T are > row too
            }
            state = online_softmax_update(state, s, kV3Tile, v_tile, D, acc, D);
        }
    }
    if (!active) return;
    // out_i = acc / l, in place over all D columns and then the first d_head written out: every index of
    // acc is known at compile time, which is what lets it live in registers (a loop to the run-time d_head
    // would index it dynamically, and put it in local memory).
    online_softmax_finish(state, acc, acc, D);
ATTN_UNROLL
    for (int c = 0; c < D; ++c)
        if (c < d_head) out[base + static_cast<long long>(row) * d_head + c] = acc[c];
}

}  // namespace attn::gpu::kernels
