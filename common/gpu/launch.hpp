// Section 9.8, the block on the GPU: the arithmetic around the kernels — launch shapes, tile counts,
// shared-memory bytes, memory and flop counts, the device's fp32 peak, the row-major → column-major
// translation of a product for cuBLAS, and the argument checks of the host-side wrappers.
//
// Plain C++ (no CUDA types, no xtensor, nothing to link but attn::Error), so the unit tests check all of
// it on a machine without a GPU (tests/common/test_gpu_host.cpp), and the .cu files launch with exactly
// these numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace attn::gpu {

// ⌈a / b⌉ for positive b.
constexpr long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// --- elementwise kernels (GELU, bias add, residual add, split/merge heads) ----------------------------
// 256 threads per block, one element per thread, in a grid-stride loop: the grid is capped so that a
// huge tensor still launches, and each thread then walks several elements.
constexpr int kElementwiseThreads = 256;
constexpr long long kMaxElementwiseBlocks = 65535;
constexpr long long elementwise_blocks(std::size_t n) {
    const long long blocks = ceil_div(static_cast<long long>(n), kElementwiseThreads);
    return blocks < 1 ? 1 : (blocks > kMaxElementwiseBlocks ? kMaxElementwiseBlocks : blocks);
}

// --- LayerNorm: one warp (32 threads) per row, 8 rows per block ---------------------------------------
constexpr int kWarp = 32;
constexpr int kLayerNormThreads = 256;
constexpr int kLayerNormRowsPerBlock = kLayerNormThreads / kWarp;
constexpr long long layernorm_blocks(long long rows) { return ceil_div(rows, kLayerNormRowsPerBlock); }

// --- attention ------------------------------------------------------------------------------------------
// The three versions of the kernel ladder (attention.cu says what each changes).
enum class AttentionVersion { v1 = 1, v2 = 2, v3 = 3 };
constexpr const char* version_name(AttentionVersion v) {
    return v == AttentionVersion::v1 ? "v1" : v == AttentionVersion::v2 ? "v2" : "v3";
}

// v1 and v3 keep one query row (and v3 its accumulator) in per-thread arrays of at most this many floats.
constexpr int kMaxDHead = 128;

// v1: one thread per (batch·head, query row), 128 threads per block.
constexpr int kV1Threads = 128;
constexpr long long v1_blocks(long long BH, long long T) { return ceil_div(BH * T, kV1Threads); }

// v2: the fused scale + mask + softmax kernel runs one block of 256 threads per row of scores.
constexpr int kSoftmaxThreads = 256;
constexpr long long v2_softmax_blocks(long long BH, long long T) { return BH * T; }

// v3: a block per (query tile, batch·head); a tile is 64 query rows, one thread each, and the key tiles
// are 64 keys. d_head is padded up to a compiled width D (16, 32, 64 or 128) with zeros, which change no
// dot product and no output column.
constexpr int kV3Tile = 64;
constexpr int v3_padded_d_head(int d_head) {
    return d_head <= 16 ? 16 : d_head <= 32 ? 32 : d_head <= 64 ? 64 : d_head <= 128 ? 128 : 0;
}
constexpr long long v3_query_tiles(long long T) { return ceil_div(T, kV3Tile); }
// Shared memory of one v3 block, in bytes: the key tile and the value tile (kV3Tile, D) each, and one row
// per thread of its query (D floats) and of its kV3Tile scores. The per-thread rows are padded by one float
// so that the 32 threads of a warp, each reading element c of its own row, hit 32 different banks (row
// strides D + 1 and kV3Tile + 1 are odd, so coprime with the 32 banks).
constexpr std::size_t v3_shared_bytes(int D) {
    const std::size_t tile = kV3Tile;
    return (2 * tile * D + tile * (D + 1) + tile * (tile + 1)) * sizeof(float);
}
// Causal tiling: query tile i needs key tiles 0..i only; the tiles after the diagonal are fully masked
// and never computed. Of the nq² (query, key) tile pairs, nq (nq + 1) / 2 are.
constexpr long long causal_tiles_computed(long long T) {
    const long long nq = v3_query_tiles(T);
    return nq * (nq + 1) / 2;
}
constexpr long long tiles_total(long long T) {
    const long long nq = v3_query_tiles(T);
    return nq * nq;
}

// --- what the host asked of the device ---------------------------------------------------------------------------
// Kernel launches and cuBLAS products since the program started, counted where they are made (check.cuh's
// launch check and layers.cu's products on a GPU; the emulator's launch and its products on the CPU), so that a
// training step's count is the same on both; and the device memory's traffic with the host, counted in
// kernel_launch.cuh's wrappers on both: allocations, fills (cudaMemset) and blocking copies each way, each
// copy a point where the host waits for the device. bench_lm_train prints them per step.
struct DeviceWork {
    long long kernels = 0, blas_calls = 0;
    long long allocations = 0, fills = 0, copies_to_device = 0, copies_to_host = 0;
    long long graphs = 0;  // CUDA Graph launches (the kernels and products inside were counted once, when captured)
};
inline DeviceWork& device_work() {
    static DeviceWork work;  // one host thread launches
    return work;
}

// --- the debug mode -------------------------------------------------------------------------------------------
// ATTN_GPU_SYNC=1 in the environment: every launch check (check.cuh) also waits for its kernel to finish, so a
// fault inside a kernel (an illegal address, a trap) is reported by the launch that caused it, naming that
// kernel, instead of by whichever call next touches the device. Slow: for finding a fault, never for timing.
// Any value but empty, "0", "no", "off" or "false" switches it on.
inline bool sync_requested(const char* value) {
    if (value == nullptr) return false;
    const std::string v = value;
    return !(v.empty() || v == "0" || v == "no" || v == "off" || v == "false");
}
inline bool sync_every_launch() {
    static const bool on = sync_requested(std::getenv("ATTN_GPU_SYNC"));  // read once: nothing switches mid-run
    return on;
}

// --- attention for training (attention_train.hpp, attention_train.cu) ------------------------------------
// The materialised path's two row kernels (scale + ALiBi + mask + softmax, and its backward) run one warp
// per row of the (B·h, T, T) matrix, 4 rows per block of 128 threads: each lane takes every 32nd column,
// and the row's max and sums are warp butterflies (a fixed order: the same bits on every run).
constexpr int kTrainRowThreads = 128;
constexpr int kTrainRowsPerBlock = kTrainRowThreads / kWarp;
constexpr long long train_row_blocks(long long rows) { return ceil_div(rows, kTrainRowsPerBlock); }

// The flash path (FlashAttention-2): tiles of kFlashTile query or key rows, one thread per row, d_head
// padded up to D in {16, 32, 64, 128} as v3 does (v3_padded_d_head). The forward has v3's shared memory
// (v3_shared_bytes). Each backward kernel keeps its block's own tile as per-thread rows padded to D + 1
// floats (each thread reads element c of its own row: odd stride, 32 different banks) — two of them (k and
// v, or q and dout) — and stages the other side's tile, two (kFlashTile, D) matrices read by every thread
// at the same address (a broadcast, no padding needed), plus two floats per row of the staged tile (lse and
// delta, dk/dv kernel only; the dq kernel keeps its own row's two in registers).
constexpr int kFlashTile = kV3Tile;
constexpr long long flash_tiles(long long T) { return ceil_div(T, kFlashTile); }
constexpr std::size_t flash_forward_shared_bytes(int D) { return v3_shared_bytes(D); }
// The backward kernels' accumulators, C floats per thread (two in the dk/dv kernel): all D columns up to
// D = 64, and 64 at D = 128, where D / C = 2 blocks share a tile (each recomputes the dot products), since two
// accumulators of 128 floats do not fit in a thread's 255 registers. Grid x: flash_tiles(T) · D / C.
constexpr int flash_backward_columns(int D) { return D <= 64 ? D : 64; }
constexpr long long flash_backward_blocks_x(long long T, int D) { return flash_tiles(T) * (D / flash_backward_columns(D)); }
constexpr std::size_t flash_backward_shared_bytes(int D) {
    const std::size_t tile = kFlashTile;
    return (2 * tile * (D + 1) + 2 * tile * D + 2 * tile) * sizeof(float);
}

// The shared memory one block of the flash path asks for at d_k (padded to D): the larger of the forward's
// and the backward's. At D = 128: 115,200 and 132,096 bytes, past the 99 KB (101,376 bytes) a consumer card
// (sm_86, sm_89, sm_120) lets a block opt in to; an A100 allows 166,912, an H100 or H200 232,448.
constexpr std::size_t flash_shared_bytes(long long d_k) {
    const int D = v3_padded_d_head(static_cast<int>(d_k));
    const std::size_t forward = flash_forward_shared_bytes(D), backward = flash_backward_shared_bytes(D);
    return forward > backward ? forward : backward;
}
// Why the flash path's blocks do not fit a device that lets a block have `limit` bytes of shared memory, or ""
// when they do.
inline std::string flash_shared_refusal(long long d_k, std::size_t limit) {
    const std::size_t need = flash_shared_bytes(d_k);
    if (need <= limit) return "";
    return "the flash path's kernels need " + std::to_string(need) + " bytes of shared memory per block at d_k = " +
           std::to_string(d_k) + " (padded to " + std::to_string(v3_padded_d_head(static_cast<int>(d_k))) +
           "); this device allows a block " + std::to_string(limit);
}

// Why the flash path cannot take a shape, or "" when it can. Its tiles skip the future (causal only), it
// tiles scores (learned weights only), it keeps one padded width for q, k and v (d_k = d_v), and a row of
// them per thread (d ≤ kMaxDHead).
inline std::string flash_refusal(bool causal, bool learned, long long d_k, long long d_v) {
    if (!causal) return "the flash path is causal only (its tiles skip the masked future); use the materialised path";
    if (!learned) return "uniform weights have no scores to tile; use the materialised path";
    if (d_k != d_v) return "the flash path needs d_k = d_v; use the materialised path";
    if (d_k > kMaxDHead) return "the flash path needs d_k ≤ " + std::to_string(kMaxDHead) + "; use the materialised path";
    return "";
}

// "(B, n_heads, T, d_k, d_v) = (…)", for the training attention's error messages.
inline std::string attention_shape_name(long long B, long long n_heads, long long T, long long d_k, long long d_v) {
    return "(B, n_heads, T, d_k, d_v) = (" + std::to_string(B) + ", " + std::to_string(n_heads) + ", " + std::to_string(T) +
           ", " + std::to_string(d_k) + ", " + std::to_string(d_v) + ")";
}
// The shape checks: positive sizes; the materialised row kernels' rows within one grid; the flash grids'
// B·h within a grid's y dimension.
inline void check_attention_train_args(const char* where, bool flash, long long B, long long n_heads, long long T,
                                       long long d_k, long long d_v) {
    const std::string shape = attention_shape_name(B, n_heads, T, d_k, d_v);
    require(B > 0 && n_heads > 0 && T > 0 && d_k > 0 && d_v > 0, where, shape + ": every size must be positive");
    if (flash)
        require(B * n_heads <= 65535, where, shape + ": B·n_heads must be at most 65535 (the grid's y dimension)");
    else
        require(train_row_blocks(B * n_heads * T) <= 2147483647LL, where, shape + ": B·n_heads·T rows are too many for one grid");
}

// Bytes of one (B·h, T, T) fp32 matrix, the scores or the weights: what v1 and v2 materialise.
constexpr std::size_t attention_matrix_bytes(std::size_t BH, std::size_t T) { return BH * T * T * sizeof(float); }

// The useful flops of causal attention: q·k for the T (T + 1) / 2 allowed (query, key) pairs and the
// same count of weight·v products, each d_head multiply-adds (2 flops), per batch·head. A kernel that
// also computes the masked half (v2's cuBLAS products) does more work than this; the exps are not counted.
constexpr double attention_useful_flops(long long BH, long long T, long long d_head) {
    return 2.0 * 2.0 * static_cast<double>(d_head) * static_cast<double>(BH) * static_cast<double>(T) *
           static_cast<double>(T + 1) / 2.0;
}

// --- the device's fp32 peak --------------------------------------------------------------------------------
// FP32 cores (lanes that retire one fused multiply-add per clock) per streaming multiprocessor, by compute
// capability, as in CUDA's samples (helper_cuda.h, _ConvertSMVer2Cores). 0 for an architecture this table
// does not know.
constexpr int fp32_cores_per_sm(int major, int minor) {
    switch (major * 10 + minor) {
        case 50: case 52: case 53: return 128;           // Maxwell
        case 60: return 64;                              // Pascal GP100
        case 61: case 62: return 128;                    // Pascal
        case 70: case 72: return 64;                     // Volta
        case 75: return 64;                              // Turing
        case 80: return 64;                              // Ampere A100
        case 86: case 87: case 88: case 89: return 128;  // Ampere GA10x, Ada
        case 90: return 128;                             // Hopper (H100, H200)
        case 100: case 101: case 103: case 110: case 120: case 121: return 128;  // Blackwell
        default: return 0;
    }
}
// Peak fp32 flop/s: every core does one FMA (2 flops) per clock on every SM. clock_khz is the SM clock the
// driver reports (the boost clock; a hot or power-capped card runs slower, so this is a ceiling).
constexpr double fp32_peak_flops(int sm_count, int cores_per_sm, long long clock_khz) {
    return 2.0 * sm_count * cores_per_sm * static_cast<double>(clock_khz) * 1e3;
}

// --- row-major products through cuBLAS (the transpose trick) ---------------------------------------------
// Our matrices are row-major; cuBLAS is column-major (Fortran's BLAS). A row-major (R, C) buffer with row
// stride ld, read column-major with leading dimension ld, *is* its transpose, a (C, R) matrix. So the
// row-major product
//     C (M, N) = op(A) (M, K) · op(B) (K, N)          A, B, C row-major, row strides lda, ldb, ldc
// is, read column-major, Cᵀ (N, M) = op(B)ᵀ · op(A)ᵀ: the same call with the operands swapped (B first,
// A second), M and N swapped, and each transpose flag kept with its own operand. No data moves.
struct CublasGemm {
    bool trans_first = false, trans_second = false;  // cuBLAS's transa, transb
    int m = 0, n = 0, k = 0;                         // cuBLAS's m, n, k
    int ld_first = 0, ld_second = 0, ldc = 0;        // cuBLAS's lda (of B), ldb (of A), ldc
};
constexpr CublasGemm row_major_gemm(bool trans_a, bool trans_b, int M, int N, int K, int lda, int ldb, int ldc) {
    return CublasGemm{trans_b, trans_a, N, M, K, ldb, lda, ldc};
}

// --- argument checks of the host-side wrappers (the .cu files call these before launching) ----------------
inline void check_positive(const char* where, const std::string& what, long long value) {
    require(value > 0, where, what + " = " + std::to_string(value) + " must be positive");
}

// q, k, v, out (B·h, T, d_head) for attention version v.
inline void check_attention_args(AttentionVersion v, long long BH, long long T, long long d_head) {
    const std::string where = std::string("gpu::attention_") + version_name(v);
    const std::string shape = "(B·h, T, d_head) = (" + std::to_string(BH) + ", " + std::to_string(T) + ", " +
                              std::to_string(d_head) + ")";
    require(BH > 0 && T > 0 && d_head > 0, where, shape + ": every size must be positive");
    if (v != AttentionVersion::v2)
        require(d_head <= kMaxDHead, where, shape + ": d_head must be at most " + std::to_string(kMaxDHead) +
                                                " (a query row lives in per-thread registers); v2 takes any d_head");
    if (v == AttentionVersion::v3)
        require(BH <= 65535, where, shape + ": B·h must be at most 65535 (the grid's y dimension)");
    if (v == AttentionVersion::v2)
        require(BH * T <= 2147483647LL, where, shape + ": B·h·T rows must fit a grid of 2³¹ − 1 blocks");
}

// x (B·T, n_heads·d_head) ↔ (B·h, T, d_head).
inline void check_heads_args(const char* where, long long B, long long T, long long n_heads, long long d_head) {
    require(B > 0 && T > 0 && n_heads > 0 && d_head > 0, where,
            "B = " + std::to_string(B) + ", T = " + std::to_string(T) + ", n_heads = " + std::to_string(n_heads) +
                ", d_head = " + std::to_string(d_head) + ": every size must be positive");
}

// x (N, d) with gain and bias (1, d).
inline void check_layernorm_args(long long N, long long d) {
    require(N > 0 && d > 0, "gpu::layernorm", "x (" + std::to_string(N) + ", " + std::to_string(d) + ") must have positive sizes");
}

// x (N, in) · W (in, out) + b.
inline void check_linear_args(long long N, long long in, long long out) {
    require(N > 0 && in > 0 && out > 0, "gpu::linear",
            "x (" + std::to_string(N) + ", " + std::to_string(in) + ") · W (" + std::to_string(in) + ", " +
                std::to_string(out) + "): every size must be positive");
    require(N <= 2147483647LL && in <= 2147483647LL && out <= 2147483647LL, "gpu::linear", "sizes must fit cuBLAS's int");
}

}  // namespace attn::gpu
