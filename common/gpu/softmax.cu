// Row softmax, version 1: one block of 256 threads per row. Each thread strides over the row to find
// its share of the max, a shared-memory tree reduction gives the row max, the same for the sum of
// exp(s − max), then each thread writes its entries. The CPU reference is attn::softmax_rows.
#include <cfloat>

#include "buffer.hpp"
#include "check.cuh"
#include "gpu.hpp"

namespace attn::gpu {

namespace {
constexpr int kThreads = 256;

__global__ void softmax_rows_v1(const float* scores, float* weights, int cols) {
    __shared__ float buf[kThreads];
    const float* s = scores + static_cast<size_t>(blockIdx.x) * cols;  // this block's row
    float* w = weights + static_cast<size_t>(blockIdx.x) * cols;

    float m = -FLT_MAX;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, s[j]);
    buf[threadIdx.x] = m;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + stride]);
        __syncthreads();
    }
    const float row_max = buf[0];
    __syncthreads();

    float sum = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(s[j] - row_max);
    buf[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
        __syncthreads();
    }
    const float inv = 1.0f / buf[0];
    for (int j = threadIdx.x; j < cols; j += blockDim.x) w[j] = expf(s[j] - row_max) * inv;
}

}  // namespace

void softmax_rows(const float* host_scores, float* host_weights, int rows, int cols) {
    require(rows > 0 && cols > 0, "gpu::softmax_rows",
            "shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ") must be positive");
    const size_t n = static_cast<size_t>(rows) * cols;
    // The kernel has no mask: every score must be finite (the library's policy: an error, never NaN).
    require_finite(host_scores, n, "gpu::softmax_rows", "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
    DeviceBuffer d_scores(n, "scores"), d_weights(n, "weights");
    d_scores.upload(host_scores, n);
    softmax_rows_v1<<<rows, kThreads>>>(d_scores.data(), d_weights.data(), cols);
    ATTN_CUDA_CHECK_LAUNCH("softmax_rows_v1");
    d_weights.download(host_weights, n);
}

}  // namespace attn::gpu
