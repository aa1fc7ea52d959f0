// What of the GPU module's host API (ops.hpp) calls cuBLAS or times with CUDA events — layers.cu — on the CPU,
// for the unit tests: see gpu_on_cpu.hpp. Each function below mirrors its namesake in common/gpu/layers.cu line
// for line — the same argument checks, the same launch shapes, the same kernels, the same row-major →
// column-major translation of a product — with cuBLAS's SGEMM done by column_major_sgemm. The rest of the
// module's .cu files (buffer.cu, attention.cu, the training files) are compiled for the tests as they are.
#include <functional>
#include <string>

#include "attn/error.hpp"
#include "buffer.hpp"
#include "gpu_on_cpu.hpp"
#include "launch.hpp"
#include "ops.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "layer_kernels.cuh"

namespace gpu_on_cpu {

void column_major_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda,
                        const float* B, int ldb, float beta, float* C, int ldc) {
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0;
            for (int p = 0; p < k; ++p) {
                const float a = trans_a ? A[p + static_cast<long long>(i) * lda] : A[i + static_cast<long long>(p) * lda];  // op(A)(i, p)
                const float b = trans_b ? B[j + static_cast<long long>(p) * ldb] : B[p + static_cast<long long>(j) * ldb];  // op(B)(p, j)
                s += static_cast<double>(a) * b;
            }
            float& c = C[i + static_cast<long long>(j) * ldc];
            c = static_cast<float>(alpha * s + (beta == 0.0f ? 0.0 : static_cast<double>(beta) * c));  // beta = 0: C is not read
        }
}

}  // namespace gpu_on_cpu

namespace attn::gpu {

using cuda_on_cpu::launch;

// --- layers.cu --------------------------------------------------------------------------------------------------
void gemm_strided_batched(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                          long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch) {
    require(M > 0 && N > 0 && K > 0 && batch > 0, "gpu::gemm_strided_batched", "sizes must be positive");
    const CublasGemm g = row_major_gemm(op_a == Op::transposed, op_b == Op::transposed, M, N, K, lda, ldb, ldc);
    ++device_work().blas_calls;
    for (int i = 0; i < batch; ++i)  // cublasSgemmStridedBatched: B first, A second
        gpu_on_cpu::column_major_sgemm(g.trans_first, g.trans_second, g.m, g.n, g.k, alpha, B + i * stride_b, g.ld_first,
                                       A + i * stride_a, g.ld_second, beta, C + i * stride_c, g.ldc);
}

void linear(const float* x, const float* W, const float* b, float* y, int N, int in, int out) {
    check_linear_args(N, in, out);
    const CublasGemm g = row_major_gemm(false, false, N, out, in, in, out, out);
    ++device_work().blas_calls;
    gpu_on_cpu::column_major_sgemm(g.trans_first, g.trans_second, g.m, g.n, g.k, 1.0f, W, g.ld_first, x, g.ld_second, 0.0f,
                                   y, g.ldc);
    if (b != nullptr) bias_add(y, b, static_cast<std::size_t>(N), out);
}

void layernorm(const float* x, const float* gain, const float* bias, float* y, int N, int d, float eps, float* mean,
               float* rstd) {
    check_layernorm_args(N, d);
    launch(kernels::layernorm_kernel, dim3(static_cast<unsigned>(layernorm_blocks(N))), dim3(kLayerNormThreads), 0, x, gain,
           bias, y, N, d, eps, mean, rstd);
}

void gelu(const float* x, float* y, std::size_t n) {
    if (n == 0) return;
    launch(kernels::gelu_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads), 0, x, y,
           static_cast<long long>(n));
}

void bias_add(float* y, const float* bias, std::size_t rows, int cols) {
    require(cols > 0, "gpu::bias_add", "cols = " + std::to_string(cols) + " must be positive");
    if (rows == 0) return;
    launch(kernels::bias_add_kernel, dim3(static_cast<unsigned>(elementwise_blocks(rows * static_cast<std::size_t>(cols)))),
           dim3(kElementwiseThreads), 0, y, bias, static_cast<long long>(rows), cols);
}

void residual_add(const float* a, const float* b, float* out, std::size_t n) {
    if (n == 0) return;
    launch(kernels::residual_add_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads), 0, a,
           b, out, static_cast<long long>(n));
}

void synchronize() {}

double time_ms(const std::function<void()>& work) {
    work();
    return 0.0;
}

}  // namespace attn::gpu
