// Exercises for Section 9.8, the block on the GPU: three kernels in CUDA C++. Write them in
// gpu_exercises.cu beside this file; check with `tools/progress.sh` or `./build/bin/exercise_tests "[ex11.1]"`,
// which runs your kernels on the CPU (each CUDA thread a fiber of its own) on any machine, and, where there is a
// GPU, `./build/bin/gpu_exercise_tests "[ex11.1]"` on the device. The library's own versions, to compare
// with once yours pass: common/gpu/softmax.cu, common/gpu/layer_kernels.cuh.
//
// Every pointer below is a *device* pointer (the tests allocate with attn::gpu::DeviceBuffer and copy in
// and out); matrices are row-major fp32.
#pragma once

namespace ex {

/// Exercise 11.1 — softmax_rows_gpu
/// Row softmax of scores (rows, cols) into weights (rows, cols): weights[r, j] = exp(s_rj − m_r) / Σ_j exp(s_rj − m_r)
/// with m_r the row's maximum (the stable softmax of Section 9.2). Every score is finite. rows = 0 or cols = 0
/// is no work: write nothing and launch nothing (CUDA refuses a grid of 0 blocks).
/// Hint 1: one block of 256 threads per row; the threads share the row's max and sum through __shared__ memory.
/// Hint 2: each thread strides the row (j = threadIdx.x; j += blockDim.x) for its max, a tree reduction in
///         __shared__ memory (halve the stride, __syncthreads() each step) gives the row's max; the same for Σ exp.
/// [vi]
/// Softmax theo hàng của scores (rows, cols) vào weights (rows, cols): weights[r, j] = exp(s_rj − m_r) / Σ_j exp(s_rj − m_r)
/// với m_r là giá trị lớn nhất của hàng (softmax ổn định của Mục 9.2). Mọi điểm số đều hữu hạn. rows = 0 hoặc
/// cols = 0 là không có việc: không ghi gì và không khởi chạy kernel nào (CUDA từ chối một lưới 0 khối).
/// Gợi ý 1: mỗi hàng một block 256 luồng; các luồng chia sẻ max và tổng của hàng qua bộ nhớ __shared__.
/// Gợi ý 2: mỗi luồng đi dọc hàng theo bước nhảy (j = threadIdx.x; j += blockDim.x) để lấy max của nó; phép rút gọn
///          hình cây trong __shared__ (giảm nửa bước mỗi lần, __syncthreads() sau mỗi bước) cho max của hàng; Σ exp cũng vậy.
void softmax_rows_gpu(const float* scores, float* weights, int rows, int cols);

/// Exercise 11.2 — layernorm_gpu
/// LayerNorm of each row of x (N, d): y = gain ⊙ (x − mean) / √(var + 1e-5) + bias, with the biased
/// variance (÷ d) and gain, bias (1, d), as attn::fast::layernorm_forward. N = 0 or d = 0 is no work: write
/// nothing and launch nothing.
/// Hint 1: one warp (32 threads) per row; a warp can sum without shared memory. Mean first, then Σ (x − mean)².
/// Hint 2: lanes stride the row, and v += __shfl_xor_sync(0xffffffff, v, o) for o = 16, 8, 4, 2, 1 leaves the
///         sum in every lane.
/// [vi]
/// LayerNorm mỗi hàng của x (N, d): y = gain ⊙ (x − mean) / √(var + 1e-5) + bias, với phương sai lệch (÷ d)
/// và gain, bias (1, d), như attn::fast::layernorm_forward. N = 0 hoặc d = 0 là không có việc: không ghi gì và không
/// khởi chạy kernel nào.
/// Gợi ý 1: mỗi hàng một warp (32 luồng); một warp cộng được mà không cần bộ nhớ chia sẻ. Tính mean trước, rồi Σ (x − mean)².
/// Gợi ý 2: các lane đi dọc hàng theo bước nhảy, và v += __shfl_xor_sync(0xffffffff, v, o) với o = 16, 8, 4, 2, 1 để lại
///          tổng ở mọi lane.
void layernorm_gpu(const float* x, const float* gain, const float* bias, float* y, int N, int d);

/// Exercise 11.3 — gelu_gpu
/// The exact GELU of n floats, elementwise: y = ½ x (1 + erf(x / √2)), as attn::fast::gelu_forward. n = 0 is no
/// work: write nothing.
/// Hint 1: the grid you are launched with may be smaller than n: each thread may have several elements.
/// Hint 2: a grid-stride loop, for (i = blockIdx.x·blockDim.x + threadIdx.x; i < n; i += gridDim.x·blockDim.x);
///         erff is CUDA's float erf.
/// [vi]
/// GELU chính xác của n số float, theo từng phần tử: y = ½ x (1 + erf(x / √2)), như attn::fast::gelu_forward. n = 0 là
/// không có việc: không ghi gì.
/// Gợi ý 1: lưới (grid) mà bạn được khởi chạy có thể nhỏ hơn n: mỗi luồng có thể phải xử lý nhiều phần tử.
/// Gợi ý 2: một vòng lặp grid-stride, for (i = blockIdx.x·blockDim.x + threadIdx.x; i < n; i += gridDim.x·blockDim.x);
///          erff là hàm erf float của CUDA.
void gelu_gpu(const float* x, float* y, long long n);

}  // namespace ex
