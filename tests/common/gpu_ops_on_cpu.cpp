// The GPU module's host API (buffer.hpp, ops.hpp) on the CPU, for the unit tests: see gpu_on_cpu.hpp.
// Each function below mirrors its namesake in common/gpu/*.cu line for line — the same argument checks,
// the same launch shapes, the same kernels, the same row-major → column-major translation of a product —
// with a kernel launch `k<<<grid, block, smem>>>(args)` written cuda_on_cpu::launch(k, grid, block, smem, args).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "attn/error.hpp"
#include "buffer.hpp"
#include "gpu_on_cpu.hpp"
#include "launch.hpp"
#include "ops.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "attention_kernels.cuh"
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

// --- buffer.hpp: host memory, on the same ledger, NaN-filled so a read of an unwritten float shows -------------
// Each buffer sits between guard pages and a guard zone (cuda_on_cpu::allocate), named by `what` in the message
// of a kernel that reads or writes outside it.
DeviceBuffer::DeviceBuffer(std::size_t count, const std::string& what) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(float);
    require_ledger_room(bytes, what);
    ptr_ = static_cast<float*>(cuda_on_cpu::allocate(bytes, what));
    for (std::size_t i = 0; i < count; ++i) ptr_[i] = std::numeric_limits<float>::quiet_NaN();
    count_ = count;
    ledger().allocated(bytes);
}

void DeviceBuffer::release() noexcept {
    if (ptr_ == nullptr) return;
    cuda_on_cpu::release(ptr_);
    ledger().freed(bytes());
    ptr_ = nullptr;
    count_ = 0;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        release();
        ptr_ = std::exchange(other.ptr_, nullptr);
        count_ = std::exchange(other.count_, 0);
    }
    return *this;
}

void DeviceBuffer::upload(const float* host, std::size_t count) {
    require(count <= count_, "gpu::DeviceBuffer::upload", std::to_string(count) + " floats into a buffer of " + std::to_string(count_));
    if (count > 0) std::memcpy(ptr_, host, count * sizeof(float));
}

void DeviceBuffer::download(float* host, std::size_t count) const {
    require(count <= count_, "gpu::DeviceBuffer::download", std::to_string(count) + " floats from a buffer of " + std::to_string(count_));
    if (count > 0) std::memcpy(host, ptr_, count * sizeof(float));
}

void DeviceBuffer::zero() {
    if (count_ > 0) std::memset(ptr_, 0, bytes());
}

void DeviceBuffer::poison() {
    if (count_ > 0) std::memset(ptr_, 0xFF, bytes());
}

// DeviceInts: host ints on the same ledger, filled with −1 (an unwritten index reads as "no token")
DeviceInts::DeviceInts(std::size_t count, const std::string& what) {
    if (count == 0) return;
    const std::size_t bytes = count * sizeof(int);
    require_ledger_room(bytes, what);
    ptr_ = static_cast<int*>(cuda_on_cpu::allocate(bytes, what));
    for (std::size_t i = 0; i < count; ++i) ptr_[i] = -1;
    count_ = count;
    ledger().allocated(bytes);
}

void DeviceInts::release() noexcept {
    if (ptr_ == nullptr) return;
    cuda_on_cpu::release(ptr_);
    ledger().freed(count_ * sizeof(int));
    ptr_ = nullptr;
    count_ = 0;
}

DeviceInts::~DeviceInts() { release(); }

DeviceInts::DeviceInts(DeviceInts&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}

DeviceInts& DeviceInts::operator=(DeviceInts&& other) noexcept {
    if (this != &other) {
        release();
        ptr_ = std::exchange(other.ptr_, nullptr);
        count_ = std::exchange(other.count_, 0);
    }
    return *this;
}

void DeviceInts::upload(const int* host, std::size_t count) {
    require(count <= count_, "gpu::DeviceInts::upload", std::to_string(count) + " ints into a buffer of " + std::to_string(count_));
    if (count > 0) std::memcpy(ptr_, host, count * sizeof(int));
}

void DeviceInts::download(int* host, std::size_t count) const {
    require(count <= count_, "gpu::DeviceInts::download", std::to_string(count) + " ints from a buffer of " + std::to_string(count_));
    if (count > 0) std::memcpy(host, ptr_, count * sizeof(int));
}

// --- attention.cu ---------------------------------------------------------------------------------------------
namespace {
float attention_scale(int d_head) { return 1.0f / std::sqrt(static_cast<float>(d_head)); }

template <int D>
void launch_v3(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head) {
    const dim3 grid(static_cast<unsigned>(v3_query_tiles(T)), static_cast<unsigned>(BH));
    launch(kernels::attention_v3_kernel<D>, grid, dim3(kV3Tile), v3_shared_bytes(D), q, k, v, out, T, d_head,
           attention_scale(d_head));
}
}  // namespace

void split_heads(const float* x, float* x_heads, int B, int T, int n_heads, int d_head) {
    check_heads_args("gpu::split_heads", B, T, n_heads, d_head);
    const std::size_t n = static_cast<std::size_t>(B) * T * n_heads * d_head;
    launch(kernels::split_heads_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads), 0,
           x, x_heads, B, T, n_heads, d_head);
}

void merge_heads(const float* x_heads, float* x, int B, int T, int n_heads, int d_head) {
    check_heads_args("gpu::merge_heads", B, T, n_heads, d_head);
    const std::size_t n = static_cast<std::size_t>(B) * T * n_heads * d_head;
    launch(kernels::merge_heads_kernel, dim3(static_cast<unsigned>(elementwise_blocks(n))), dim3(kElementwiseThreads), 0,
           x_heads, x, B, T, n_heads, d_head);
}

void attention_v1(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head, float* scores) {
    check_attention_args(AttentionVersion::v1, BH, T, d_head);
    DeviceBuffer own;
    if (scores == nullptr) {
        own = DeviceBuffer(static_cast<std::size_t>(BH) * T * T, "the scores (B·h, T, T)");
        scores = own.data();
    }
    const dim3 blocks(static_cast<unsigned>(v1_blocks(BH, T)));
    launch(kernels::attention_v1_scores, blocks, dim3(kV1Threads), 0, q, k, scores, BH, T, d_head, attention_scale(d_head));
    launch(kernels::attention_v1_softmax, blocks, dim3(kV1Threads), 0, scores, BH, T);
    launch(kernels::attention_v1_mix, blocks, dim3(kV1Threads), 0, static_cast<const float*>(scores), v, out, BH, T, d_head);
}

void attention_v2(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head, float* scores) {
    check_attention_args(AttentionVersion::v2, BH, T, d_head);
    DeviceBuffer own;
    if (scores == nullptr) {
        own = DeviceBuffer(static_cast<std::size_t>(BH) * T * T, "the scores (B·h, T, T)");
        scores = own.data();
    }
    const long long head = static_cast<long long>(T) * d_head;
    const long long matrix = static_cast<long long>(T) * T;
    gemm_strided_batched(Op::as_is, Op::transposed, T, T, d_head, 1.0f, q, d_head, head, k, d_head, head, 0.0f, scores, T, matrix, BH);
    launch(kernels::scale_mask_softmax_kernel, dim3(static_cast<unsigned>(v2_softmax_blocks(BH, T))), dim3(kSoftmaxThreads), 0,
           scores, T, attention_scale(d_head));
    gemm_strided_batched(Op::as_is, Op::as_is, T, d_head, T, 1.0f, scores, T, matrix, v, d_head, head, 0.0f, out, d_head, head, BH);
}

void attention_v3(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head) {
    check_attention_args(AttentionVersion::v3, BH, T, d_head);
    switch (v3_padded_d_head(d_head)) {
        case 16: launch_v3<16>(q, k, v, out, BH, T, d_head); break;
        case 32: launch_v3<32>(q, k, v, out, BH, T, d_head); break;
        case 64: launch_v3<64>(q, k, v, out, BH, T, d_head); break;
        default: launch_v3<128>(q, k, v, out, BH, T, d_head); break;
    }
}

void attention(AttentionVersion version, const float* q, const float* k, const float* v, float* out, int BH, int T,
               int d_head, float* scores) {
    switch (version) {
        case AttentionVersion::v1: attention_v1(q, k, v, out, BH, T, d_head, scores); break;
        case AttentionVersion::v2: attention_v2(q, k, v, out, BH, T, d_head, scores); break;
        case AttentionVersion::v3: attention_v3(q, k, v, out, BH, T, d_head); break;
    }
}

// --- layers.cu --------------------------------------------------------------------------------------------------
void gemm_strided_batched(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                          long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch) {
    require(M > 0 && N > 0 && K > 0 && batch > 0, "gpu::gemm_strided_batched", "sizes must be positive");
    const CublasGemm g = row_major_gemm(op_a == Op::transposed, op_b == Op::transposed, M, N, K, lda, ldb, ldc);
    for (int i = 0; i < batch; ++i)  // cublasSgemmStridedBatched: B first, A second
        gpu_on_cpu::column_major_sgemm(g.trans_first, g.trans_second, g.m, g.n, g.k, alpha, B + i * stride_b, g.ld_first,
                                       A + i * stride_a, g.ld_second, beta, C + i * stride_c, g.ldc);
}

void linear(const float* x, const float* W, const float* b, float* y, int N, int in, int out) {
    check_linear_args(N, in, out);
    const CublasGemm g = row_major_gemm(false, false, N, out, in, in, out, out);
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
