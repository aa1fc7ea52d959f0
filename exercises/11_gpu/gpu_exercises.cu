// Your answers to the GPU exercises of Section 9.8 (CUDA C++; see gpu_exercises.hpp). Each launcher
// below is written for you but throws until you write its kernel: write the kernel's body, then delete
// the attn::not_implemented line of its launcher. attn::gpu::launch("name", kernel, grid, block, 0, args…) is
// kernel<<<grid, block>>>(args…) on a GPU; the tests also run this file on the CPU (each CUDA thread
// a fiber of its own, common/gpu/kernel_launch.cuh), so you can check your kernels on any machine.
#include "11_gpu/gpu_exercises.hpp"

#include "core/error.hpp"
#include "kernel_launch.cuh"

namespace ex {

namespace {

// Exercise 11.1: blockIdx.x is the row; scores + row·cols is its first score. 256 threads per block.
__global__ void softmax_rows_kernel(const float* scores, float* weights, int cols) {
    (void)scores, (void)weights, (void)cols;
}

// Exercise 11.2: 8 warps per block, warp w of block b takes row b·8 + w (rows ≥ N: return).
__global__ void layernorm_kernel(const float* x, const float* gain, const float* bias, float* y, int N, int d) {
    (void)x, (void)gain, (void)bias, (void)y, (void)N, (void)d;
}

// Exercise 11.3: any grid; cover all n elements with a grid-stride loop.
__global__ void gelu_kernel(const float* x, float* y, long long n) {
    (void)x, (void)y, (void)n;
}

}  // namespace

void softmax_rows_gpu(const float* scores, float* weights, int rows, int cols) {
    attn::not_implemented("11.1", "softmax_rows_gpu",
                          "write softmax_rows_kernel in exercises/11_gpu/gpu_exercises.cu: per row a block max, a block sum of exp, divide");
    attn::gpu::launch("softmax_rows_kernel", softmax_rows_kernel, dim3(rows), dim3(256), 0, scores, weights, cols);
}

void layernorm_gpu(const float* x, const float* gain, const float* bias, float* y, int N, int d) {
    attn::not_implemented("11.2", "layernorm_gpu",
                          "write layernorm_kernel in exercises/11_gpu/gpu_exercises.cu: a warp per row, shuffle sums for mean and variance");
    attn::gpu::launch("layernorm_kernel", layernorm_kernel, dim3((N + 7) / 8), dim3(256), 0, x, gain, bias, y, N, d);
}

void gelu_gpu(const float* x, float* y, long long n) {
    attn::not_implemented("11.3", "gelu_gpu",
                          "write gelu_kernel in exercises/11_gpu/gpu_exercises.cu: 0.5 x (1 + erff(x / sqrt 2)) in a grid-stride loop");
    attn::gpu::launch("gelu_kernel", gelu_kernel, dim3(256), dim3(256), 0, x, y, n);
}

}  // namespace ex
