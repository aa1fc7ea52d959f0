// The layers' training kernels, device code only (train_layers.cu launches them; the unit tests run the same
// source on the CPU through tests/common/cuda_on_cpu.hpp):
//
//   (LayerNorm's forward: layer_kernels.cuh's layernorm_kernel, keeping mean and rstd (N))
//   layernorm_backward_dx       one warp per row: dx = rstd (dxhat − mean(dxhat) − xhat mean(dxhat ⊙ xhat))
//   column_sums_kernel          out[c] += Σ_r dy[r, c] (and Σ_r dy[r, c] · xhat[r, c]): dbias, dgain, in a fixed
//                               order — 8 row groups of a block, combined in group order (no atomics); many
//                               rows in chunks of 256, each chunk's sums to a scratch row
//   column_sums_combine_kernel  the chunks' rows added in chunk order
//   gelu_backward_kernel        dx = dy (Φ(x) + x φ(x)), exact (erf)
//   add_inplace, scale_inplace  elementwise
//   sum_squares_kernel          per-block Σ x² in double, a fixed tree in shared memory; the host adds the blocks
//   embedding_forward_kernel    x[n] = wte[token[n]] + wpe[n mod T] + table[n mod T]
//   embedding_dwte_kernel       one block per distinct token: dwte[v] += its positions' dx rows, ascending
//   position_sums_kernel        dwpe[t] += Σ_b dx[b·T + t], one thread per (t, column), b ascending
//   cross_entropy_kernel        one block per row: max, Σ exp, loss = log Σ exp − (logit[t] − max), dlogits
//   rope_rotate_kernel          one thread per (row, head, pair)
//   sum_squares_many_kernel     every tensor's sum_squares blocks in one launch (TensorGroup::clip_factor)
//   clip_scale_kernel           the clipping factor from every tensor's sum_squares blocks, in the host's order
//   adamw_kernel                one thread per element, attn::AdamW::step's float arithmetic (g scaled first)
//   zero_grads_kernel, adamw_many_kernel   every tensor of a model in one launch (TensorGroup)
//
// Bit-for-bit with the CPU: where the CPU library's loop is a fixed formula (RoPE, AdamW, the embedding's
// sums), the kernels spell each product and sum with the round-to-nearest intrinsics (mul_rn, add_rn, …), so
// nvcc cannot contract a·b + c into one fused multiply-add, whose single rounding differs from the CPU's two.
#pragma once

#include "launch.hpp"
#include "reductions.cuh"

namespace attn::gpu {

// --- launch shapes of the training kernels ---------------------------------------------------------------------------
// Column sums: a block covers 32 adjacent columns with 8 warps; warp g sums rows g, g + 8, g + 16, …
// of its lane's column, and the 8 partial sums are added in g order. A warp reads 32 consecutive floats.
constexpr int kColumnSumWidth = kWarp;
constexpr int kColumnSumGroups = 8;
constexpr int kColumnSumThreads = kColumnSumWidth * kColumnSumGroups;
constexpr long long column_sum_blocks(long long cols) { return ceil_div(cols, kColumnSumWidth); }
// Many rows are cut into chunks of kColumnSumChunk, a grid row of blocks each (grid (column blocks, chunks)), so
// that N = 8,192 rows of 128 columns make 128 blocks, not 4 with 1,024 serial additions a thread. Each chunk
// writes its sums to a scratch row; a second kernel adds the rows in chunk order (a fixed order: the same bits on
// every run). Up to one chunk of rows, one pass adds straight into the output.
constexpr long long kColumnSumChunk = 256;
constexpr long long column_sum_chunks(long long rows) { return ceil_div(rows, kColumnSumChunk); }

// Σ x²: at most 256 blocks of 256 threads, each a grid-stride loop; the number of blocks depends on n only,
// so the same n always sums in the same order.
constexpr int kSumSquaresThreads = 256;
constexpr long long kMaxSumSquaresBlocks = 256;
constexpr long long sum_squares_blocks(std::size_t n) {
    const long long blocks = ceil_div(static_cast<long long>(n), kSumSquaresThreads);
    return blocks < 1 ? 1 : (blocks > kMaxSumSquaresBlocks ? kMaxSumSquaresBlocks : blocks);
}

// Cross-entropy: one block per row of logits, of V threads rounded up to whole warps, at most 256 (a small
// vocabulary leaves no warp idle; a large one strides). The embedding's dwte: one block of 128 threads per
// distinct token, striding the columns.
constexpr int kMaxCrossEntropyThreads = 256;
constexpr int cross_entropy_threads(int V) {
    const long long warps = ceil_div(V, kWarp) < 1 ? 1 : ceil_div(V, kWarp);
    return warps * kWarp > kMaxCrossEntropyThreads ? kMaxCrossEntropyThreads : static_cast<int>(warps * kWarp);
}
constexpr int kEmbeddingThreads = 128;

// Many tensors in one launch (TensorGroup): each tensor gets the blocks its own launch would have had, one
// tensor after another in the grid; first[t] is tensor t's first block (tensors + 1 entries, the last the grid's
// size), and a block strides over its tensor alone, as that launch's grid would: the same work, the same bits.
struct TensorSlot {
    float* w;
    float* g;
    float* m;
    float* v;
    long long n;
    int decay;  // 1: AdamW's weight decay applies; 0: it does not (biases, gains)
    int pad;
};
static_assert(sizeof(TensorSlot) == 48 && alignof(TensorSlot) == 8, "a slot: the same 48 bytes on the host and the device");
// The clipping factor's threads: each sums its tensors' block sums, then one adds the tensors in order.
constexpr int kClipScaleThreads = 256;

}  // namespace attn::gpu

namespace attn::gpu::kernels {

// The tensor whose blocks hold `block`: first[t] <= block < first[t + 1] (a binary search over tensors + 1 entries).
__device__ inline int tensor_of_block(const int* first, int tensors, int block) {
    int lo = 0, hi = tensors;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (first[mid] <= block) lo = mid; else hi = mid;
    }
    return lo;
}

// --- IEEE round-to-nearest arithmetic, never contracted into an FMA -----------------------------------------------
#if defined(__CUDACC__)
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float sqrt_rn(float a) { return __fsqrt_rn(a); }
#else  // on the CPU (the unit tests): plain float operations, which GCC does not contract under -std=c++20
inline float mul_rn(float a, float b) { return a * b; }
inline float add_rn(float a, float b) { return a + b; }
inline float sub_rn(float a, float b) { return a - b; }
inline float div_rn(float a, float b) { return a / b; }
inline float sqrt_rn(float a) { return sqrtf(a); }
#endif

// --- LayerNorm ------------------------------------------------------------------------------------------------------
// The forward is layer_kernels.cuh's layernorm_kernel (ops.hpp: layernorm), given somewhere to keep each
// row's mean and rstd.
// Backward's dx, one warp per row: with xhat = (x − mean) · rstd and dxhat = dy ⊙ gain,
// dx = rstd · (dxhat − mean(dxhat) − xhat · mean(dxhat ⊙ xhat)), as attn::fast::layernorm_backward.
__global__ void layernorm_backward_dx_kernel(const float* dy, const float* x, const float* gain, const float* mean,
                                             const float* rstd, float* dx, int N, int d) {
    const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= N) return;
    const float *dy_row = dy + row * d, *x_row = x + row * d;
    const float mu = mean[row], rs = rstd[row];
    float sum_d = 0.0f, sum_dx = 0.0f;
    for (int j = lane; j < d; j += kWarp) {
        const float dxhat = dy_row[j] * gain[j], xhat = (x_row[j] - mu) * rs;
        sum_d += dxhat;
        sum_dx += dxhat * xhat;
    }
    const float mean_d = warp_sum(sum_d) / static_cast<float>(d), mean_dx = warp_sum(sum_dx) / static_cast<float>(d);
    float* dx_row = dx + row * d;
    for (int j = lane; j < d; j += kWarp) {
        const float xhat = (x_row[j] - mu) * rs;
        dx_row[j] = rs * (dy_row[j] * gain[j] - mean_d - xhat * mean_dx);
    }
}

// Column sums of dy (rows, cols), accumulated: sum[c] += Σ_r dy[r, c] when sum is not null, and, when
// sum_xhat is not null, sum_xhat[c] += Σ_r dy[r, c] · xhat[r, c] with xhat = (x[r, c] − mean[r]) · rstd[r]
// (LayerNorm's dgain; x, mean, rstd are read only then). Block: kColumnSumThreads threads, 32 columns;
// warp g sums rows g, g + 8, …; then warp 0 adds the 8 partial sums in g order. No thread returns early:
// the ones past the last column still reach the __syncthreads.
// Block (x, y) sums chunk y's rows of its 32 columns. chunk_rows: the rows of a chunk (all of them in one pass).
// chunk_sum, chunk_sum_xhat: (chunks, cols) scratch rows to write, or null to add into sum and sum_xhat.
__global__ void column_sums_kernel(const float* dy, long long rows, long long cols, float* sum, float* sum_xhat,
                                   const float* x, const float* mean, const float* rstd, long long chunk_rows,
                                   float* chunk_sum, float* chunk_sum_xhat) {
    __shared__ float part[kColumnSumGroups][kColumnSumWidth];
    __shared__ float part_xhat[kColumnSumGroups][kColumnSumWidth];
    const int lane = threadIdx.x % kWarp, group = threadIdx.x / kWarp;
    const long long c = static_cast<long long>(blockIdx.x) * kColumnSumWidth + lane;
    const long long begin = static_cast<long long>(blockIdx.y) * chunk_rows;
    const long long end = begin + chunk_rows < rows ? begin + chunk_rows : rows;
    float s = 0.0f, sx = 0.0f;
    if (c < cols)
        for (long long r = begin + group; r < end; r += kColumnSumGroups) {
            const float g = dy[r * cols + c];
            s += g;
            if (sum_xhat != nullptr) sx += g * ((x[r * cols + c] - mean[r]) * rstd[r]);
        }
    part[group][lane] = s;
    part_xhat[group][lane] = sx;
    __syncthreads();
    if (group == 0 && c < cols) {
        float total = 0.0f, total_xhat = 0.0f;
        for (int k = 0; k < kColumnSumGroups; ++k) total += part[k][lane], total_xhat += part_xhat[k][lane];
        if (chunk_sum != nullptr) {  // a scratch row, added by column_sums_combine_kernel
            chunk_sum[blockIdx.y * cols + c] = total;
            if (chunk_sum_xhat != nullptr) chunk_sum_xhat[blockIdx.y * cols + c] = total_xhat;
            return;
        }
        if (sum != nullptr) sum[c] += total;
        if (sum_xhat != nullptr) sum_xhat[c] += total_xhat;
    }
}

// sum[c] += Σ_chunks chunk_sum[k, c] in chunk order (and sum_xhat from chunk_sum_xhat): one thread per column.
__global__ void column_sums_combine_kernel(const float* chunk_sum, const float* chunk_sum_xhat, long long chunks, long long cols,
                                           float* sum, float* sum_xhat) {
    const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float total = 0.0f, total_xhat = 0.0f;
    for (long long k = 0; k < chunks; ++k) {
        total += chunk_sum[k * cols + c];
        if (chunk_sum_xhat != nullptr) total_xhat += chunk_sum_xhat[k * cols + c];
    }
    if (sum != nullptr) sum[c] += total;
    if (sum_xhat != nullptr) sum_xhat[c] += total_xhat;
}

// --- elementwise ------------------------------------------------------------------------------------------------------
// dx = dy · (Φ(x) + x φ(x)), Φ(x) = ½ (1 + erf(x / √2)), φ(x) = e^{−x²/2} / √(2π). dx may be dy.
__global__ void gelu_backward_kernel(const float* x, const float* dy, float* dx, long long n) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        const float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
        const float pdf = 0.39894228040143268f * expf(-0.5f * v * v);
        dx[i] = dy[i] * (cdf + v * pdf);
    }
}

__global__ void add_inplace_kernel(float* y, const float* x, long long n) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] += x[i];
}

__global__ void scale_inplace_kernel(float* x, long long n, float s) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] *= s;
}

// A block's share of Σ x², in double: each thread x[start + t], x[start + t + stride], … in order, then a fixed tree
// over the block's threads in `part` (kSumSquaresThreads doubles of shared memory; halves: t += t + 128, then + 64,
// …); thread 0 writes the block's sum to *out. sum_squares_kernel: block b's share of its grid-stride loop into
// block_sums[b], which the host adds in b order.
__device__ inline void block_sum_squares(const float* x, long long n, long long start, long long stride, double* part, double* out) {
    const int t = threadIdx.x;
    double s = 0.0;
    for (long long i = start + t; i < n; i += stride) {
        const double v = x[i];
        s += v * v;
    }
    part[t] = s;
    __syncthreads();
    for (int half = kSumSquaresThreads / 2; half > 0; half /= 2) {
        if (t < half) part[t] += part[t + half];
        __syncthreads();
    }
    if (t == 0) *out = part[0];
}
__global__ void sum_squares_kernel(const float* x, long long n, double* block_sums) {
    __shared__ double part[kSumSquaresThreads];
    block_sum_squares(x, n, static_cast<long long>(blockIdx.x) * blockDim.x, static_cast<long long>(gridDim.x) * blockDim.x, part,
                      block_sums + blockIdx.x);
}

// Σ g² of every tensor of slots in one launch: block b of the grid is block b - first[t] of tensor t's
// sum_squares_kernel (its grid sum_squares_blocks(n) = first[t + 1] - first[t] blocks), the same loop and tree;
// block_sums[b] as that launch's block_sums[b - first[t]], after tensor t - 1's.
__global__ void sum_squares_many_kernel(const TensorSlot* slots, const int* first, int tensors, double* block_sums) {
    __shared__ double part[kSumSquaresThreads];
    const int tensor = tensor_of_block(first, tensors, static_cast<int>(blockIdx.x));
    const int local = static_cast<int>(blockIdx.x) - first[tensor], blocks = first[tensor + 1] - first[tensor];
    block_sum_squares(slots[tensor].g, slots[tensor].n, static_cast<long long>(local) * blockDim.x,
                      static_cast<long long>(blocks) * blockDim.x, part, block_sums + blockIdx.x);
}

// The clipping factor from every tensor's block sums (TensorGroup::clip_factor), in the host's order: each tensor's blocks in
// block order into its Σ g² (thread t sums tensors t, t + 256, …, into tensor_sums), then one thread adds the
// tensors in turn into the global Σ g², in double; clip / norm where the norm is past clip, else 1, rounded to
// float once, as attn::clip_grad_norm's static_cast<float>(clip / norm).
__global__ void clip_scale_kernel(const double* block_sums, const int* first, int tensors, double clip, double* tensor_sums,
                                  float* scale) {
    for (int t = threadIdx.x; t < tensors; t += blockDim.x) {
        double tensor = 0.0;
        for (int b = first[t]; b < first[t + 1]; ++b) tensor += block_sums[b];
        tensor_sums[t] = tensor;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    double total = 0.0;
    for (int t = 0; t < tensors; ++t) total += tensor_sums[t];
    const double norm = sqrt(total);
    *scale = norm > clip ? static_cast<float>(clip / norm) : 1.0f;
}

// --- embeddings ---------------------------------------------------------------------------------------------------------
// x[n, j] = (wte[token[n], j] + (wpe ? wpe[n mod T, j] : 0)) + (table ? table[n mod T, j] : 0), the CPU's order
// of the sums (attn::fast::embedding_forward, then attn::fast::Model's sinusoid add). A token outside [0, V) cannot throw
// here: its row becomes NaN, which every later check catches, instead of a read out of bounds.
__global__ void embedding_forward_kernel(const int* tokens, const float* wte, const float* wpe, const float* table, float* x,
                                         int T, int d, int V, long long n_total) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_total; i += stride) {
        const long long n = i / d;
        const int j = static_cast<int>(i % d), tok = tokens[n];
        const long long t = n % T;
        if (tok < 0 || tok >= V) {
            x[i] = NAN;
            continue;
        }
        float v = add_rn(wte[static_cast<long long>(tok) * d + j], wpe != nullptr ? wpe[t * d + j] : 0.0f);
        if (table != nullptr) v = add_rn(v, table[t * d + j]);
        x[i] = v;
    }
}

// dwte[token[g]] += the rows dx[position[start[g]]], dx[position[start[g] + 1]], …, one block per group g,
// threads over the columns. Positions ascend within a group, so each element is summed in the CPU's order.
__global__ void embedding_dwte_kernel(const int* token, const int* start, const int* position, const float* dx, float* dwte,
                                      int d) {
    const int g = blockIdx.x;
    const long long row = token[g];
    const int first = start[g], last = start[g + 1];
    for (int j = threadIdx.x; j < d; j += blockDim.x) {
        float acc = dwte[row * d + j];
        for (int p = first; p < last; ++p) acc = add_rn(acc, dx[static_cast<long long>(position[p]) * d + j]);
        dwte[row * d + j] = acc;
    }
}

// dwpe[t, j] += Σ_b dx[b·T + t, j], b ascending (the CPU's order), one thread per element of (T, d).
__global__ void position_sums_kernel(const float* dx, float* dwpe, int B, long long Td) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < Td; i += stride) {
        float acc = dwpe[i];
        for (int b = 0; b < B; ++b) acc = add_rn(acc, dx[b * Td + i]);
        dwpe[i] = acc;
    }
}

// --- cross-entropy ------------------------------------------------------------------------------------------------------
// One block per row n of logits (N, V). m = max, s = Σ exp(z − m); loss[n] = log s − (z[t] − m) (= −log p[t]);
// dlogits[n, j] = (exp(z_j − m) · (1/s) − [j = t]) · inv_counted, the CPU's operations. Target −1: loss 0 and a
// zero row. A target ≥ V (which cannot throw here): loss NaN. z[t] is read before the first barrier and every
// thread writes only the columns it read, so dlogits may be logits (in place).
__global__ void cross_entropy_kernel(const float* logits, const int* targets, float* losses, float* dlogits, int V,
                                     float inv_counted) {
    const long long n = blockIdx.x;
    const float* z = logits + n * V;
    const int t = targets[n];
    const bool scored = t >= 0 && t < V;
    const float z_t = scored ? z[t] : 0.0f;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, z[j]);
    m = block_max(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(z[j] - m);
    s = block_sum(s);
    if (threadIdx.x == 0) losses[n] = t < 0 ? 0.0f : scored ? logf(s) - (z_t - m) : NAN;
    if (dlogits == nullptr) return;  // after the last barrier: every thread leaves here together
    float* row = dlogits + n * V;
    const float inv_s = 1.0f / s;
    for (int j = threadIdx.x; j < V; j += blockDim.x) {
        if (t < 0) {
            row[j] = 0.0f;
            continue;
        }
        const float p = expf(z[j] - m) * inv_s;
        row[j] = (j == t ? p - 1.0f : p) * inv_counted;
    }
}

// --- RoPE ----------------------------------------------------------------------------------------------------------------------
// One thread per pair: x (B·T, n_heads·d_k); the pair (2j, 2j+1) of head h in row n turns by sign · angle(n mod T, j):
// x0' = x0 c − x1 s, x1' = x0 s + x1 c with c = angles[t, 2j], s = sign · angles[t, 2j + 1] (math/positions.cpp's rotate_pairs).
__global__ void rope_rotate_kernel(float* x, const float* angles, int T, int n_heads, int d_k, float sign, long long pairs) {
    const long long per_row = static_cast<long long>(n_heads) * (d_k / 2);
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs; p += stride) {
        const long long n = p / per_row, q = p % per_row;
        const int j = static_cast<int>(2 * (q % (d_k / 2)));
        const long long col = (q / (d_k / 2)) * d_k + j;
        const float* a = angles + (n % T) * d_k;
        float* row = x + n * per_row * 2;
        const float c = a[j], s = mul_rn(sign, a[j + 1]), x0 = row[col], x1 = row[col + 1];
        row[col] = sub_rn(mul_rn(x0, c), mul_rn(x1, s));
        row[col + 1] = add_rn(mul_rn(x0, s), mul_rn(x1, c));
    }
}

// --- AdamW ---------------------------------------------------------------------------------------------------------------------
// attn::AdamW::step's loop body, operation for operation: m = β1 m + (1 − β1) g; v = β2 v + (1 − β2) g g;
// w −= lr (m/bc1 / (√(v/bc2) + eps) + decay w). IEEE division and square root (nvcc's defaults, spelled out).
__device__ inline void adamw_element(float* w, const float* g, float* m, float* v, long long i, float lr, float beta1, float beta2,
                                     float eps, float decay, float bc1, float bc2, const float* grad_scale) {
    const float one_m_b1 = 1.0f - beta1, one_m_b2 = 1.0f - beta2;
    const float gi = grad_scale != nullptr ? mul_rn(g[i], *grad_scale) : g[i];
    const float mi = add_rn(mul_rn(beta1, m[i]), mul_rn(one_m_b1, gi));
    const float vi = add_rn(mul_rn(beta2, v[i]), mul_rn(mul_rn(one_m_b2, gi), gi));
    m[i] = mi, v[i] = vi;
    const float mhat = div_rn(mi, bc1), vhat = div_rn(vi, bc2);
    const float wi = w[i];
    w[i] = sub_rn(wi, mul_rn(lr, add_rn(div_rn(mhat, add_rn(sqrt_rn(vhat), eps)), mul_rn(decay, wi))));
}
__global__ void adamw_kernel(float* w, const float* g, float* m, float* v, long long n, float lr, float beta1, float beta2,
                             float eps, float decay, float bc1, float bc2, const float* grad_scale) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        adamw_element(w, g, m, v, i, lr, beta1, beta2, eps, decay, bc1, bc2, grad_scale);
}


// Every tensor's gradient set to 0 in one launch: elementwise_blocks(n) blocks a tensor (first), a grid-stride loop each.
__global__ void zero_grads_kernel(const TensorSlot* slots, const int* first, int tensors) {
    const int tensor = tensor_of_block(first, tensors, static_cast<int>(blockIdx.x));
    const int local = static_cast<int>(blockIdx.x) - first[tensor], blocks = first[tensor + 1] - first[tensor];
    float* g = slots[tensor].g;
    const long long n = slots[tensor].n, stride = static_cast<long long>(blocks) * blockDim.x;
    for (long long i = static_cast<long long>(local) * blockDim.x + threadIdx.x; i < n; i += stride) g[i] = 0.0f;
}

// adamw_kernel on every tensor in one launch: block b - first[t] of tensor t's own grid (elementwise_blocks(n)), the
// same element loop, its decay weight_decay where the tensor's slot says so, else 0.
__global__ void adamw_many_kernel(const TensorSlot* slots, const int* first, int tensors, float lr, float beta1, float beta2,
                                  float eps, float weight_decay, float bc1, float bc2, const float* grad_scale) {
    const int tensor = tensor_of_block(first, tensors, static_cast<int>(blockIdx.x));
    const int local = static_cast<int>(blockIdx.x) - first[tensor], blocks = first[tensor + 1] - first[tensor];
    const TensorSlot slot = slots[tensor];
    const float decay = slot.decay != 0 ? weight_decay : 0.0f;
    const long long stride = static_cast<long long>(blocks) * blockDim.x;
    for (long long i = static_cast<long long>(local) * blockDim.x + threadIdx.x; i < slot.n; i += stride)
        adamw_element(slot.w, slot.g, slot.m, slot.v, i, lr, beta1, beta2, eps, decay, bc1, bc2, grad_scale);
}

}  // namespace attn::gpu::kernels
