// The GPU operations of a Transformer block, on device pointers (DeviceBuffer::data()). Each launches its
// kernel(s) or cuBLAS call on the default stream, checks the launch, and returns without waiting; a
// failure throws attn::Error naming the call, file and line. Arguments are checked first (launch.hpp).
//
// Plain C++ — no CUDA types, no xtensor — so plain .cpp files (the block, the bridge to the CPU model, the
// programs) call them; the bodies are in attention.cu and layers.cu.
#pragma once

#include <cstddef>
#include <functional>

#include "core/op.hpp"
#include "launch.hpp"

namespace attn::gpu {

// --- attention (attention.cu) ---------------------------------------------------------------------------
// (B·T, n_heads·d_head) ↔ (B·h, T, d_head), as attn::split_heads / merge_heads.
void split_heads(const float* x, float* x_heads, int B, int T, int n_heads, int d_head);
void merge_heads(const float* x_heads, float* x, int B, int T, int n_heads, int d_head);

// Causal attention on split heads: q, k, v, out (B·h, T, d_head), scale 1/√d_head. v1 and v2 need a
// (B·h, T, T) scores matrix: pass one of attention_matrix_bytes(BH, T) bytes (the table allocates it
// before the clock starts), or null and the call allocates it as a DeviceBuffer for its duration (and can
// throw OutOfMemory). v3 needs none and ignores it. v1, v3: d_head ≤ kMaxDHead.
void attention_v1(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head,
                  float* scores = nullptr);
void attention_v2(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head,
                  float* scores = nullptr);
void attention_v3(const float* q, const float* k, const float* v, float* out, int BH, int T, int d_head);
void attention(AttentionVersion version, const float* q, const float* k, const float* v, float* out, int BH, int T,
               int d_head, float* scores = nullptr);

// --- the other layers (layers.cu) -------------------------------------------------------------------------
// x (N, d), gain and bias (1, d) → y (N, d); eps as attn::fast::layernorm_forward.
// mean and rstd (N), if given, keep each row's statistics for a backward (train_layers.hpp: layernorm_forward).
void layernorm(const float* x, const float* gain, const float* bias, float* y, int N, int d, float eps = 1e-5f,
               float* mean = nullptr, float* rstd = nullptr);
// y = gelu(x), exact (erf), n elements; y may be x.
void gelu(const float* x, float* y, std::size_t n);
// y (rows, cols) += bias (1, cols), row by row.
void bias_add(float* y, const float* bias, std::size_t rows, int cols);
// out = a + b, n elements; out may be a or b.
void residual_add(const float* a, const float* b, float* out, std::size_t n);
// y (N, out) = x (N, in) · W (in, out) + b (1, out), b may be null: one cuBLAS SGEMM (fp32, no TF32) and a
// bias add.
void linear(const float* x, const float* W, const float* b, float* y, int N, int in, int out);

// Row-major batched product through cublasSgemmStridedBatched (batch 1: one product), e.g. dW += xᵀ dy:
// C_i (M, N) = alpha op(A_i) op(B_i) + beta C_i, X_i = X + i·stride_X (see launch.hpp: row_major_gemm).
void gemm_strided_batched(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                          long long stride_a, const float* B, int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch);

// The precision of every product from now on (cuBLAS's math mode on the process's handle): Matmul::fp32 (the
// default) or Matmul::tf32. GpuModel sets its own before each forward and backward.
void set_matmul(Matmul precision);

// --- CUDA Graphs ----------------------------------------------------------------------------------------------
// Device work recorded once and replayed with one launch: capture(work) runs `work` with every kernel launch,
// cuBLAS product and fill recorded instead of run; launch() replays the recording on the default stream, after
// whatever was launched before it. The recording keeps the pointers and sizes `work` passed, so it is valid while
// its buffers are and the host values it read stay the same. A copy to or from the host or a wait inside `work`
// throws attn::Error (a host sync in mid-step), and nothing is kept. Move-only.
class DeviceGraph {
public:
    DeviceGraph() = default;
    ~DeviceGraph();
    DeviceGraph(DeviceGraph&& other) noexcept;
    DeviceGraph& operator=(DeviceGraph&& other) noexcept;
    DeviceGraph(const DeviceGraph&) = delete;
    DeviceGraph& operator=(const DeviceGraph&) = delete;

    void capture(const std::function<void()>& work);
    void launch();
    bool empty() const { return graph_ == nullptr; }
    void reset() noexcept;  // back to empty

private:
    void* graph_ = nullptr;  // cudaGraphExec_t (the emulator: its recording)
};

// --- time and synchronisation ------------------------------------------------------------------------------
void synchronize();  // waits for the device; surfaces an asynchronous kernel error as attn::Error
// Milliseconds that `work` (launches on the default stream) takes on the device, between two CUDA events.
double time_ms(const std::function<void()>& work);

}  // namespace attn::gpu
