// The block's other layers on the GPU, and the cuBLAS products (Section 9.8):
//
//   layernorm     one warp per row, two-pass mean and variance with warp shuffles (layer_kernels.cuh)
//   gelu          exact, erf; elementwise
//   bias_add      y[r, :] += b
//   residual_add  out = a + b
//   linear        y = x W + b: one cuBLAS SGEMM, then bias_add. Row-major data through column-major cuBLAS
//                 by the transpose trick (launch.hpp: row_major_gemm) — no copy, no transposition kernel.
//
// Products are plain fp32 (CUBLAS_DEFAULT_MATH: no TF32 tensor cores), so the GPU block matches the CPU's
// OpenBLAS to fp32 rounding. cuBLAS's workspace is one of our DeviceBuffers, so the ledger's peak counts it.
#include <string>

#include "buffer.hpp"
#include "check.cuh"
#include "launch.hpp"
#include "layer_kernels.cuh"
#include "ops.hpp"

namespace attn::gpu {

namespace {
// One cuBLAS handle for the process, created on first use, with a workspace we own (32 MiB, cuBLAS's
// recommendation for Hopper) so that no allocation escapes the ledger.
class Blas {
public:
    static Blas& get() {
        static Blas blas;
        return blas;
    }
    cublasHandle_t handle() const { return handle_; }
    ~Blas() { cublasDestroy(handle_); }  // errors at exit are ignored
    Blas(const Blas&) = delete;
    Blas& operator=(const Blas&) = delete;

private:
    static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
    Blas() : workspace_(kWorkspaceBytes / sizeof(float), "cuBLAS's workspace") {
        ATTN_CUBLAS_CHECK(cublasCreate(&handle_));
        ATTN_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
        ATTN_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.data(), workspace_.bytes()));
    }
    DeviceBuffer workspace_;
    cublasHandle_t handle_ = nullptr;
};

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// An event pair that is destroyed however the timed work ends.
struct EventPair {
    cudaEvent_t start = nullptr, stop = nullptr;
    EventPair() {
        ATTN_CUDA_CHECK(cudaEventCreate(&start));
        ATTN_CUDA_CHECK(cudaEventCreate(&stop));
    }
    ~EventPair() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
};
}  // namespace

void gemm_strided_batched(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                          long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch) {
    require(M > 0 && N > 0 && K > 0 && batch > 0, "gpu::gemm_strided_batched",
            "M, N, K, batch = " + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ", " +
                std::to_string(batch) + " must be positive");
    // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: B goes first, A second (launch.hpp).
    const CublasGemm g = row_major_gemm(op_a == Op::transposed, op_b == Op::transposed, M, N, K, lda, ldb, ldc);
    ++device_work().blas_calls;
    ATTN_CUBLAS_CHECK(cublasSgemmStridedBatched(Blas::get().handle(), op(g.trans_first), op(g.trans_second), g.m, g.n, g.k,
                                                &alpha, B, g.ld_first, stride_b, A, g.ld_second, stride_a, &beta, C, g.ldc,
                                                stride_c, batch));
}

void linear(const float* x, const float* W, const float* b, float* y, int N, int in, int out) {
    check_linear_args(N, in, out);
    const float alpha = 1.0f, beta = 0.0f;
    // y (N, out) = x (N, in) · W (in, out), all row-major: cuBLAS computes yᵀ = Wᵀ xᵀ, W first.
    const CublasGemm g = row_major_gemm(false, false, N, out, in, in, out, out);
    ++device_work().blas_calls;
    ATTN_CUBLAS_CHECK(cublasSgemm(Blas::get().handle(), op(g.trans_first), op(g.trans_second), g.m, g.n, g.k, &alpha, W,
                                  g.ld_first, x, g.ld_second, &beta, y, g.ldc));
    if (b != nullptr) bias_add(y, b, static_cast<std::size_t>(N), out);
}

void layernorm(const float* x, const float* gain, const float* bias, float* y, int N, int d, float eps, float* mean,
               float* rstd) {
    check_layernorm_args(N, d);
    kernels::layernorm_kernel<<<static_cast<unsigned>(layernorm_blocks(N)), kLayerNormThreads>>>(x, gain, bias, y, N, d, eps,
                                                                                                 mean, rstd);
    ATTN_CUDA_CHECK_LAUNCH("layernorm_kernel");
}

void gelu(const float* x, float* y, std::size_t n) {
    if (n == 0) return;
    kernels::gelu_kernel<<<static_cast<unsigned>(elementwise_blocks(n)), kElementwiseThreads>>>(x, y, static_cast<long long>(n));
    ATTN_CUDA_CHECK_LAUNCH("gelu_kernel");
}

void bias_add(float* y, const float* bias, std::size_t rows, int cols) {
    require(cols > 0, "gpu::bias_add", "cols = " + std::to_string(cols) + " must be positive");
    if (rows == 0) return;
    kernels::bias_add_kernel<<<static_cast<unsigned>(elementwise_blocks(rows * static_cast<std::size_t>(cols))),
                               kElementwiseThreads>>>(y, bias, static_cast<long long>(rows), cols);
    ATTN_CUDA_CHECK_LAUNCH("bias_add_kernel");
}

void residual_add(const float* a, const float* b, float* out, std::size_t n) {
    if (n == 0) return;
    kernels::residual_add_kernel<<<static_cast<unsigned>(elementwise_blocks(n)), kElementwiseThreads>>>(
        a, b, out, static_cast<long long>(n));
    ATTN_CUDA_CHECK_LAUNCH("residual_add_kernel");
}

void synchronize() { ATTN_CUDA_CHECK(cudaDeviceSynchronize()); }

double time_ms(const std::function<void()>& work) {
    EventPair events;
    ATTN_CUDA_CHECK(cudaEventRecord(events.start));
    work();
    ATTN_CUDA_CHECK(cudaEventRecord(events.stop));
    ATTN_CUDA_CHECK(cudaEventSynchronize(events.stop));
    float ms = 0.0f;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    return ms;
}

}  // namespace attn::gpu
