// Reference answers for the GPU exercises of Section 9.8 (see exercises/11_gpu/gpu_exercises.hpp).
#include "11_gpu/gpu_exercises.hpp"

#include "core/error.hpp"
#include "kernel_launch.cuh"

namespace ex {

namespace {

constexpr int kThreads = 256;

// 11.1: one block per row. Max and Σ exp by tree reductions in shared memory (blockDim.x a power of two).
__global__ void softmax_rows_kernel(const float* scores, float* weights, int cols) {
    __shared__ float buf[kThreads];
    const float* s = scores + static_cast<long long>(blockIdx.x) * cols;
    float* w = weights + static_cast<long long>(blockIdx.x) * cols;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, s[j]);
    buf[threadIdx.x] = m;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + stride]);
        __syncthreads();
    }
    const float row_max = buf[0];
    __syncthreads();  // everyone has read buf[0] before it is reused
    float sum = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(s[j] - row_max);
    buf[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
        __syncthreads();
    }
    const float inv = 1.0f / buf[0];
    for (int j = threadIdx.x; j < cols; j += blockDim.x) w[j] = expf(s[j] - row_max) * inv;
}

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// 11.2: one warp per row, 8 rows per block; two passes (mean, then squared deviations).
__global__ void layernorm_kernel(const float* x, const float* gain, const float* bias, float* y, int N, int d) {
    const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= N) return;  // whole warps leave together
    const float* xr = x + row * d;
    float sum = 0.0f;
    for (int j = lane; j < d; j += 32) sum += xr[j];
    const float mean = warp_sum(sum) / d;
    float sq = 0.0f;
    for (int j = lane; j < d; j += 32) sq += (xr[j] - mean) * (xr[j] - mean);
    const float rstd = 1.0f / sqrtf(warp_sum(sq) / d + 1e-5f);
    float* yr = y + row * d;
    for (int j = lane; j < d; j += 32) yr[j] = gain[j] * ((xr[j] - mean) * rstd) + bias[j];
}

// 11.3: grid-stride loop.
__global__ void gelu_kernel(const float* x, float* y, long long n) {
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}

}  // namespace

void softmax_rows_gpu(const float* scores, float* weights, int rows, int cols) {
    if (rows == 0 || cols == 0) return;  // no work: CUDA refuses a grid of 0 blocks
    attn::gpu::launch("softmax_rows_kernel", softmax_rows_kernel, dim3(rows), dim3(kThreads), 0, scores, weights, cols);
}

void layernorm_gpu(const float* x, const float* gain, const float* bias, float* y, int N, int d) {
    if (N == 0 || d == 0) return;  // no work
    attn::gpu::launch("layernorm_kernel", layernorm_kernel, dim3((N + 7) / 8), dim3(256), 0, x, gain, bias, y, N, d);
}

void gelu_gpu(const float* x, float* y, long long n) {
    if (n == 0) return;  // no work
    attn::gpu::launch("gelu_kernel", gelu_kernel, dim3(256), dim3(256), 0, x, y, n);
}

}  // namespace ex
