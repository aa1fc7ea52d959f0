// The rest of the block's kernels, device code only (layers.cu launches them): LayerNorm, GELU, the bias
// add and the residual add. The projections and the FFN's two products are cuBLAS calls (layers.cu).
// As attention_kernels.cuh, this source also runs on the CPU in the unit tests.
#pragma once

#include "launch.hpp"
#include "reductions.cuh"

namespace attn::gpu::kernels {

// LayerNorm, one warp per row: y = gain ⊙ (x − mean) · rstd + bias with rstd = 1/√(var + eps) and the
// biased variance (÷ d), as attn::fast::layernorm_forward. Two passes over the row — the mean first, then the
// sum of squared deviations — rather than Σx and Σx² in one, which cancels badly when |mean| ≫ std.
// Lanes stride the row (lane, lane + 32, …) so a warp reads 32 consecutive floats at a time; the
// butterfly sums leave the result in every lane. Block: kLayerNormRowsPerBlock warps, one row each.
// mean_out and rstd_out (N): where the training forward keeps each row's mean and rstd for its backward
// (train_layers.cu); null in the forward-only block.
__global__ void layernorm_kernel(const float* x, const float* gain, const float* bias, float* y, int N, int d, float eps,
                                 float* mean_out, float* rstd_out) {
    const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= N) return;  // the whole warp leaves together: no shuffle runs short of lanes
    const float* x_row = x + row * d;
    float sum = 0.0f;
    for (int j = lane; j < d; j += kWarp) sum += x_row[j];
    const float mean = warp_sum(sum) / static_cast<float>(d);
    float sq = 0.0f;
    for (int j = lane; j < d; j += kWarp) {
        const float diff = x_row[j] - mean;
        sq += diff * diff;
    }
    const float rstd = 1.0f / sqrtf(warp_sum(sq) / static_cast<float>(d) + eps);
    float* y_row = y + row * d;
    for (int j = lane; j < d; j += kWarp) y_row[j] = gain[j] * ((x_row[j] - mean) * rstd) + bias[j];
    if (lane == 0 && mean_out != nullptr) mean_out[row] = mean, rstd_out[row] = rstd;
}

// GELU, exact: y = x Φ(x) = ½ x (1 + erf(x / √2)), elementwise, grid-stride.
__global__ void gelu_kernel(const float* x, float* y, long long n) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

// y[r, c] += bias[c] for every row r of y (rows, cols).
__global__ void bias_add_kernel(float* y, const float* bias, long long rows, int cols) {
    const long long n = rows * cols;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] += bias[i % cols];
}

// out = a + b, elementwise (the residual connection). out may be a or b.
__global__ void residual_add_kernel(const float* a, const float* b, float* out, long long n) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = a[i] + b[i];
}

}  // namespace attn::gpu::kernels
