// The block's other layers on the GPU, and the products (Section 9.8):
//
//   layernorm     one warp per row, two-pass mean and variance with warp shuffles (layer_kernels.cuh)
//   gelu          exact, erf; elementwise
//   bias_add      y[r, :] += b
//   residual_add  out = a + b
//   linear        y = x W + b: one cuBLAS SGEMM, then bias_add. Row-major data through column-major cuBLAS
//                 by the transpose trick (launch.hpp: row_major_gemm) — no copy, no transposition kernel.
//
// Launches, products and timing go through kernel_launch.cuh, so that this file, like the module's other .cu
// files, also compiles as C++ on the kernels' CPU emulation for the unit tests (its products then a
// column-major loop in double, its timing the host's clock). Products are plain fp32 unless set_matmul asks
// for TF32, so the GPU block matches the CPU's OpenBLAS to fp32 rounding; cuBLAS's workspace is one of our
// DeviceBuffers, so the ledger's peak counts it. DeviceGraph records and replays CUDA Graphs the same way.
#include <functional>
#include <string>

#include "core/error.hpp"
#include "buffer.hpp"
#include "kernel_launch.cuh"
#include "launch.hpp"
#include "layer_kernels.cuh"
#include "ops.hpp"

namespace attn::gpu {

void gemm_strided_batched(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                          long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch) {
    if (!(M > 0 && N > 0 && K > 0 && batch > 0))
        throw Error("gpu::gemm_strided_batched: M, N, K, batch = " + std::to_string(M) + ", " + std::to_string(N) + ", " +
                    std::to_string(K) + ", " + std::to_string(batch) + " must be positive");
    // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: B goes first, A second (launch.hpp).
    const CublasGemm g = row_major_gemm(op_a == Op::transposed, op_b == Op::transposed, M, N, K, lda, ldb, ldc);
    sgemm_strided_batched(g.trans_first, g.trans_second, g.m, g.n, g.k, alpha, B, g.ld_first, stride_b, A, g.ld_second, stride_a,
                          beta, C, g.ldc, stride_c, batch);
}

// --- CUDA Graphs ---------------------------------------------------------------------------------------------
DeviceGraph::~DeviceGraph() { reset(); }
DeviceGraph::DeviceGraph(DeviceGraph&& other) noexcept : graph_(other.graph_) { other.graph_ = nullptr; }
DeviceGraph& DeviceGraph::operator=(DeviceGraph&& other) noexcept {
    if (this != &other) {
        reset();
        graph_ = other.graph_;
        other.graph_ = nullptr;
    }
    return *this;
}
void DeviceGraph::reset() noexcept {
    destroy_graph(static_cast<GraphHandle>(graph_));
    graph_ = nullptr;
}
void DeviceGraph::capture(const std::function<void()>& work) {
    reset();
    begin_capture();
    try {
        work();
    } catch (...) {
        abort_capture();
        throw;
    }
    graph_ = end_capture();
}
void DeviceGraph::launch() {
    require(graph_ != nullptr, "gpu::DeviceGraph::launch", "nothing was captured");
    launch_graph(static_cast<GraphHandle>(graph_));
}

void set_matmul(Matmul precision) { set_blas_tf32(precision == Matmul::tf32); }

void linear(const float* x, const float* W, const float* b, float* y, int N, int in, int out) {
    check_linear_args(N, in, out);
    // y (N, out) = x (N, in) · W (in, out), all row-major: cuBLAS computes yᵀ = Wᵀ xᵀ, W first.
    const CublasGemm g = row_major_gemm(false, false, N, out, in, in, out, out);
    sgemm(g.trans_first, g.trans_second, g.m, g.n, g.k, 1.0f, W, g.ld_first, x, g.ld_second, 0.0f, y, g.ldc);
    if (b != nullptr) bias_add(y, b, static_cast<std::size_t>(N), out);
}

void layernorm(const float* x, const float* gain, const float* bias, float* y, int N, int d, float eps, float* mean,
               float* rstd) {
    check_layernorm_args(N, d);
    launch("layernorm_kernel", kernels::layernorm_kernel, dim3(static_cast<unsigned>(layernorm_blocks(N))), dim3(kLayerNormThreads),
           0, x, gain, bias, y, N, d, eps, mean, rstd);
}

void gelu(const float* x, float* y, std::size_t n) {
    if (n == 0) return;
    launch("gelu_kernel", kernels::gelu_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads), 0, x,
           y, static_cast<long long>(n));
}

void bias_add(float* y, const float* bias, std::size_t rows, int cols) {
    require(cols > 0, "gpu::bias_add", "cols = " + std::to_string(cols) + " must be positive");
    if (rows == 0) return;
    launch("bias_add_kernel", kernels::bias_add_kernel,
           dim3(static_cast<unsigned>(elementwise_blocks(rows * static_cast<std::size_t>(cols)))), dim3(kElementwiseThreads), 0, y,
           bias, static_cast<long long>(rows), cols);
}

void residual_add(const float* a, const float* b, float* out, std::size_t n) {
    if (n == 0) return;
    launch("residual_add_kernel", kernels::residual_add_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))),
           dim3(kElementwiseThreads), 0, a, b, out, static_cast<long long>(n));
}

void synchronize() { synchronize_device(); }

double time_ms(const std::function<void()>& work) { return time_device_ms(work); }

}  // namespace attn::gpu
