// The GPU module on a machine without a GPU (Section 9.8). Two kinds of test, both plain C++:
//   - the arithmetic the .cu files launch with (launch.hpp): grids, tiles, shared memory, memory and flop
//     counts, the fp32 peak, the transpose trick for cuBLAS, the argument checks; and the memory ledger;
//   - the kernels themselves, their real source run on the CPU by cuda_on_cpu.hpp, and the block and stack
//     above them (common/gpu/model_layers.cpp, transformer_gpu.cpp, unchanged) on layers.cu compiled for the emulator
//     (gpu_layers_on_cpu.cpp) — each against the CPU library. The same comparisons run on a real device in
//     tests/gpu/test_gpu.cpp (ctest label gpu).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "fast/layers.hpp"
#include "fast/multi_head.hpp"
#include "core/rng.hpp"
#include "math/stats.hpp"
#include "fast/model.hpp"
#include "buffer.hpp"
#include "cuda_on_cpu_runtime.hpp"
#include "launch.hpp"
#include "ops.hpp"
#include "transformer_gpu.hpp"
// Last, after every library header: the emulator's macros (threadIdx, __shared__, …) and the kernels.
#include "cuda_on_cpu.hpp"
#include "attention_kernels.cuh"

using attn::Mat;
using attn::gpu::AttentionVersion;
namespace gpu = attn::gpu;

namespace {
// Host (B·T, d_model) q, k, v → the GPU path's merged output: split heads, attention, merge.
Mat attention_via_ops(AttentionVersion version, const Mat& q, const Mat& k, const Mat& v, int B, int T, int n_heads) {
    const int d = static_cast<int>(q.shape(1)), dh = d / n_heads;
    const gpu::DeviceBuffer dq = gpu::to_device(q, "q"), dk = gpu::to_device(k, "k"), dv = gpu::to_device(v, "v");
    gpu::DeviceBuffer qh(q.size()), kh(q.size()), vh(q.size()), oh(q.size()), out(q.size());
    for (gpu::DeviceBuffer* b : {&qh, &kh, &vh, &oh, &out}) b->poison();  // NaN wherever a kernel does not write
    gpu::split_heads(dq.data(), qh.data(), B, T, n_heads, dh);
    gpu::split_heads(dk.data(), kh.data(), B, T, n_heads, dh);
    gpu::split_heads(dv.data(), vh.data(), B, T, n_heads, dh);
    gpu::attention(version, qh.data(), kh.data(), vh.data(), oh.data(), B * n_heads, T, dh);
    gpu::merge_heads(oh.data(), out.data(), B, T, n_heads, dh);
    return gpu::to_host(out, q.shape(0), q.shape(1));
}

// Every parameter moved off its initial value (biases start at 0 and gains at 1, which would hide a
// missing bias add or gain).
void perturb(attn::fast::Model& model, attn::Rng& rng) {
    for (attn::Param& p : model.params().all())
        for (float& w : p.value) w += 0.1f * static_cast<float>(rng.normal());
}
}  // namespace

TEST_CASE("launch shapes: grid sizes, tiles and shared memory", "[gpu-host]") {
    using namespace attn::gpu;
    CHECK(ceil_div(0, 64) == 0);
    CHECK(ceil_div(1, 64) == 1);
    CHECK(ceil_div(64, 64) == 1);
    CHECK(ceil_div(65, 64) == 2);
    // elementwise: at least one block, one thread per element, capped (the kernels stride the rest)
    CHECK(elementwise_blocks(0) == 1);
    CHECK(elementwise_blocks(256) == 1);
    CHECK(elementwise_blocks(257) == 2);
    CHECK(elementwise_blocks(std::size_t{1} << 40) == kMaxElementwiseBlocks);
    // LayerNorm: a warp per row, 8 rows per block
    CHECK(kLayerNormRowsPerBlock == 8);
    CHECK(layernorm_blocks(1) == 1);
    CHECK(layernorm_blocks(8) == 1);
    CHECK(layernorm_blocks(9) == 2);
    // v1: a thread per (batch·head, row)
    CHECK(v1_blocks(8, 128) == 8);
    CHECK(v1_blocks(3, 5) == 1);
    // v2: a block per row of scores
    CHECK(v2_softmax_blocks(8, 4096) == 8 * 4096);
    // v3: 64-row query tiles; d_head padded to a compiled width
    CHECK(v3_query_tiles(1) == 1);
    CHECK(v3_query_tiles(64) == 1);
    CHECK(v3_query_tiles(65) == 2);
    CHECK(v3_padded_d_head(1) == 16);
    CHECK(v3_padded_d_head(16) == 16);
    CHECK(v3_padded_d_head(24) == 32);
    CHECK(v3_padded_d_head(64) == 64);
    CHECK(v3_padded_d_head(65) == 128);
    CHECK(v3_padded_d_head(129) == 0);
    // shared memory: K and V tiles (64, D), 64 query rows of D + 1 floats and 64 score rows of 65
    CHECK(v3_shared_bytes(64) == (2 * 64 * 64 + 64 * 65 + 64 * 65) * 4);
    CHECK(v3_shared_bytes(64) > 48 * 1024);   // over the default 48 KiB: the launch must opt in (attention.cu does)
    CHECK(v3_shared_bytes(128) < 163 * 1024); // within an sm_80 block's maximum (sm_90: 227 KiB)
    CHECK((kV3Tile + 1) % 2 == 1);            // score rows and query rows (D + 1) have odd strides: no bank conflicts
}

TEST_CASE("causal tiling computes only the tiles on and below the diagonal", "[gpu-host]") {
    using namespace attn::gpu;
    CHECK(causal_tiles_computed(1) == 1);
    CHECK(causal_tiles_computed(64) == 1);
    CHECK(causal_tiles_computed(65) == 3);      // 2 query tiles: 1 + 2
    CHECK(causal_tiles_computed(256) == 10);    // 4 query tiles: 1 + 2 + 3 + 4 of 16
    CHECK(tiles_total(256) == 16);
    // For long sequences the fraction computed tends to one half.
    const double frac = static_cast<double>(causal_tiles_computed(131072)) / static_cast<double>(tiles_total(131072));
    CHECK(frac == Approx(0.5).margin(0.001));
    // The count matches a brute-force walk over (query tile, key tile) pairs with any unmasked entry.
    for (long long T : {1LL, 50LL, 64LL, 100LL, 200LL, 640LL}) {
        long long live = 0;
        const long long nq = v3_query_tiles(T);
        for (long long qt = 0; qt < nq; ++qt)
            for (long long kt = 0; kt < nq; ++kt) {
                bool any = false;
                for (long long i = qt * kV3Tile; i < std::min(T, (qt + 1) * kV3Tile) && !any; ++i)
                    any = kt * kV3Tile <= i;  // key kt·64 ≤ query i
                live += any;
            }
        CHECK(live == causal_tiles_computed(T));
    }
}

TEST_CASE("memory and flop counts: the chapter's 8 GiB scores matrix", "[gpu-host]") {
    using namespace attn::gpu;
    // "8 heads × 16,384 × 16,384 × 4 bytes": 8 GiB for one matrix of one layer, one sequence
    CHECK(attention_matrix_bytes(8, 16384) == std::size_t{8} << 30);
    CHECK(attention_matrix_bytes(8, 128) == 512 * 1024);  // the chapter's first row: 0.5 MB
    // doubling T multiplies the matrix by exactly 4
    CHECK(attention_matrix_bytes(8, 4096) * 4 == attention_matrix_bytes(8, 8192));
    // useful flops: 2 products × 2 flops × d_head × T (T + 1) / 2 pairs per head
    CHECK(attention_useful_flops(1, 1, 64) == Approx(2.0 * 2.0 * 64 * 1));
    CHECK(attention_useful_flops(8, 1024, 64) == Approx(4.0 * 64 * 8 * 1024.0 * 1025.0 / 2.0));
}

TEST_CASE("the fp32 peak comes from the SM count, the clock and the cores per SM of the compute capability", "[gpu-host]") {
    using namespace attn::gpu;
    CHECK(fp32_cores_per_sm(9, 0) == 128);  // Hopper
    CHECK(fp32_cores_per_sm(8, 0) == 64);   // A100
    CHECK(fp32_cores_per_sm(8, 6) == 128);  // RTX 30xx
    CHECK(fp32_cores_per_sm(8, 9) == 128);  // RTX 40xx
    CHECK(fp32_cores_per_sm(7, 0) == 64);   // V100
    CHECK(fp32_cores_per_sm(1, 0) == 0);    // unknown: no invented number
    // an H200: 132 SMs at 1,980 MHz → 66.9 TFLOP/s
    CHECK(fp32_peak_flops(132, 128, 1980000) == Approx(66.9e12).epsilon(0.001));
    // an A100: 108 SMs at 1,410 MHz → 19.5 TFLOP/s, NVIDIA's datasheet figure
    CHECK(fp32_peak_flops(108, 64, 1410000) == Approx(19.5e12).epsilon(0.001));
}

TEST_CASE("row-major products through column-major cuBLAS: the transpose trick", "[gpu-host]") {
    attn::Rng rng(11);
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            const int M = 5, N = 7, K = 3;
            const int pad = 2;  // row strides larger than the rows: the leading dimensions must carry through
            // A is (M, K) or, transposed, stored (K, M); B is (K, N) or stored (N, K)
            const int a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
            const int lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
            std::vector<float> A(static_cast<std::size_t>(a_rows) * lda), B(static_cast<std::size_t>(b_rows) * ldb);
            for (float& x : A) x = static_cast<float>(rng.normal());
            for (float& x : B) x = static_cast<float>(rng.normal());
            std::vector<float> C(static_cast<std::size_t>(M) * ldc, 123.0f);
            const gpu::CublasGemm g = gpu::row_major_gemm(ta, tb, M, N, K, lda, ldb, ldc);
            cuda_on_cpu::column_major_sgemm(g.trans_first, g.trans_second, g.m, g.n, g.k, 1.0f, B.data(), g.ld_first,
                                           A.data(), g.ld_second, 0.0f, C.data(), g.ldc);
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    double s = 0;
                    for (int p = 0; p < K; ++p) {
                        const float a = ta ? A[p * lda + i] : A[i * lda + p];
                        const float b = tb ? B[j * ldb + p] : B[p * ldb + j];
                        s += static_cast<double>(a) * b;
                    }
                    INFO("trans_a " << ta << ", trans_b " << tb << ", C(" << i << ", " << j << ")");
                    CHECK(C[i * ldc + j] == Approx(s).margin(1e-5));
                }
            for (int i = 0; i < M; ++i)  // the padding of C is not written
                for (int j = N; j < ldc; ++j) CHECK(C[i * ldc + j] == 123.0f);
        }
}

TEST_CASE("the host-side wrappers' argument checks name the function and the rule", "[gpu-host][errors]") {
    using namespace attn::gpu;
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(check_attention_args(AttentionVersion::v1, 8, 0, 64), Contains("gpu::attention_v1") && Contains("positive"));
    CHECK_THROWS_WITH(check_attention_args(AttentionVersion::v3, 8, 128, 200), Contains("gpu::attention_v3") && Contains("at most 128"));
    CHECK_THROWS_WITH(check_attention_args(AttentionVersion::v1, 8, 128, 129), Contains("d_head must be at most 128"));
    CHECK_NOTHROW(check_attention_args(AttentionVersion::v2, 8, 128, 200));  // cuBLAS takes any d_head
    CHECK_THROWS_WITH(check_attention_args(AttentionVersion::v3, 70000, 16, 64), Contains("65535"));
    CHECK_NOTHROW(check_attention_args(AttentionVersion::v3, 8, 131072, 64));
    CHECK_THROWS_WITH(check_heads_args("gpu::split_heads", 2, 8, 0, 16), Contains("gpu::split_heads") && Contains("n_heads = 0"));
    CHECK_THROWS_WITH(check_layernorm_args(0, 8), Contains("gpu::layernorm"));
    CHECK_THROWS_WITH(check_linear_args(4, 8, 0), Contains("gpu::linear"));
    CHECK_THROWS_WITH(gpu::check_block_dims(gpu::BlockDims{30, 4, 120}, AttentionVersion::v3), Contains("not divisible by n_heads = 4"));
    CHECK_THROWS_WITH(gpu::check_block_dims(gpu::BlockDims{512, 2, 2048}, AttentionVersion::v3), Contains("d_head = 256"));
    CHECK_NOTHROW(gpu::check_block_dims(gpu::BlockDims{512, 2, 2048}, AttentionVersion::v2));
}

TEST_CASE("the memory ledger counts bytes held, the peak, and a simulated device size", "[gpu-host]") {
    gpu::MemoryLedger book;
    book.allocated(100);
    book.allocated(50);
    CHECK(book.current() == 150);
    CHECK(book.peak() == 150);
    book.freed(100);
    CHECK(book.current() == 50);
    CHECK(book.peak() == 150);
    book.reset_peak();
    CHECK(book.peak() == 50);
    CHECK(book.admits(std::size_t{1} << 50));  // no limit: the device decides
    book.set_limit(200);
    CHECK(book.admits(150));
    CHECK_FALSE(book.admits(151));
    book.set_limit(40);  // below what is held: nothing more fits
    CHECK_FALSE(book.admits(1));
}

TEST_CASE("DeviceBuffer: past the ledger's limit an allocation fails with OutOfMemory, and frees return bytes", "[gpu-host][errors]") {
    gpu::MemoryLedger& book = gpu::ledger();
    const std::size_t before = book.current();
    {
        gpu::DeviceBuffer a(1000, "a");
        CHECK(book.current() == before + 4000);
        gpu::DeviceBuffer b = std::move(a);  // moves, does not copy or double-count
        CHECK(book.current() == before + 4000);
        CHECK(a.data() == nullptr);
    }
    CHECK(book.current() == before);
    book.set_limit(before + 4096);
    CHECK_THROWS_AS(gpu::DeviceBuffer(2000, "the scores (B·h, T, T)"), gpu::OutOfMemory);
    CHECK_THROWS_WITH(gpu::DeviceBuffer(2000, "the scores (B·h, T, T)"), Catch::Matchers::Contains("the scores (B·h, T, T)") &&
                                                                             Catch::Matchers::Contains("out of memory"));
    CHECK_NOTHROW(gpu::DeviceBuffer(1000, "fits"));
    book.set_limit(0);
}

TEST_CASE("kernels on the CPU: split and merge heads as the CPU library does", "[gpu-host][kernels]") {
    attn::Rng rng(3);
    for (const auto& [B, T, h, dh] : std::vector<std::array<int, 4>>{{1, 1, 1, 1}, {2, 5, 3, 4}, {3, 17, 2, 8}}) {
        const Mat x = rng.normal_mat(static_cast<std::size_t>(B * T), static_cast<std::size_t>(h * dh));
        const gpu::DeviceBuffer dx = gpu::to_device(x, "x");
        gpu::DeviceBuffer heads(x.size()), back(x.size());
        heads.poison(), back.poison();
        gpu::split_heads(dx.data(), heads.data(), B, T, h, dh);
        const attn::Tensor3 ref = attn::split_heads(x, B, T, h);
        std::vector<float> got(x.size());
        heads.download(got.data(), got.size());
        CHECK(std::equal(got.begin(), got.end(), ref.data()));
        gpu::merge_heads(heads.data(), back.data(), B, T, h, dh);
        CHECK(attn::max_abs_diff(gpu::to_host(back, x.shape(0), x.shape(1)), x) == 0.0);
    }
}

TEST_CASE("kernels on the CPU: attention v1, v2 and v3 against causal_attention_forward", "[gpu-host][kernels]") {
    attn::Rng rng(5);
    // (B, T, n_heads, d_head): T of one row, below, at and past a 64-row tile, several tiles; d_head padded
    // by v3 (8 → 16, 24 → 32), exact (16, 64), the largest (128)
    const std::vector<std::array<int, 4>> shapes = {{1, 1, 1, 8}, {2, 7, 2, 16}, {1, 64, 1, 24}, {1, 65, 2, 8},
                                                    {2, 130, 1, 64}, {1, 70, 1, 128}};
    for (const auto& [B, T, h, dh] : shapes) {
        const std::size_t N = static_cast<std::size_t>(B * T), d = static_cast<std::size_t>(h * dh);
        const Mat q = rng.normal_mat(N, d), k = rng.normal_mat(N, d), v = rng.normal_mat(N, d);
        attn::fast::AttentionCache cache;
        const Mat ref = attn::fast::causal_attention_forward(q, k, v, B, T, h, cache);
        for (AttentionVersion version : {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3}) {
            // v2's softmax is a block of 256 threads per row, each a CPU thread here: small shapes only (its
            // stride over rows longer than the block is checked below)
            if (version == AttentionVersion::v2 && B * h * T > 40) continue;
            const Mat out = attention_via_ops(version, q, k, v, B, T, h);
            INFO(gpu::version_name(version) << ", (B, T, h, d_head) = (" << B << ", " << T << ", " << h << ", " << dh << ")");
            // fp32 with another summation order than the CPU's: a few ulps of |out| ≤ max |v| ≈ 4
            CHECK(attn::max_abs_diff(out, ref) < 2e-5);
        }
    }
}

TEST_CASE("kernels on the CPU: v2's fused scale + mask + softmax strides rows longer than its block", "[gpu-host][kernels]") {
    // Launched with 64 threads (any multiple of 32 works) on rows of T = 100, so threads take several keys.
    attn::Rng rng(6);
    const int T = 100;
    const float scale = 0.25f;
    const Mat scores = rng.normal_mat(T, T) * 3.0f;
    Mat weights = scores;
    cuda_on_cpu::launch(gpu::kernels::scale_mask_softmax_kernel, dim3(T), dim3(64), 0, weights.data(), T, scale);
    for (int i = 0; i < T; ++i) {
        double m = -1e30, sum = 0;
        for (int j = 0; j <= i; ++j) m = std::max(m, static_cast<double>(scores(i, j)) * scale);
        for (int j = 0; j <= i; ++j) sum += std::exp(static_cast<double>(scores(i, j)) * scale - m);
        for (int j = 0; j < T; ++j) {
            const double want = j <= i ? std::exp(static_cast<double>(scores(i, j)) * scale - m) / sum : 0.0;
            INFO("row " << i << ", key " << j);
            REQUIRE(weights(i, j) == Approx(want).margin(1e-6));
        }
    }
}

TEST_CASE("kernels on the CPU: LayerNorm, GELU, bias add, residual add against the CPU layers", "[gpu-host][kernels]") {
    attn::Rng rng(7);
    attn::Parameters p;
    for (const auto& [N, d] : std::vector<std::array<int, 2>>{{1, 1}, {3, 31}, {13, 50}, {9, 200}}) {
        Mat x = rng.normal_mat(static_cast<std::size_t>(N), static_cast<std::size_t>(d)) * 2.0f + 3.0f;  // mean 3, std 2
        attn::Param& gain = p.normal("g" + std::to_string(N), 1, d, 1.0f, rng);
        attn::Param& bias = p.normal("b" + std::to_string(N), 1, d, 1.0f, rng);
        attn::fast::LayerNormCache cache;
        const Mat ref = attn::fast::layernorm_forward(x, gain, bias, cache);
        const gpu::DeviceBuffer dx = gpu::to_device(x, "x"), dg = gpu::to_device(gain.value, "gain"),
                                db = gpu::to_device(bias.value, "bias");
        gpu::DeviceBuffer dy(x.size());
        dy.poison();
        gpu::layernorm(dx.data(), dg.data(), db.data(), dy.data(), N, d);
        INFO("LayerNorm (" << N << ", " << d << ")");
        CHECK(attn::max_abs_diff(gpu::to_host(dy, x.shape(0), x.shape(1)), ref) < 1e-5);

        dy.poison();
        gpu::gelu(dx.data(), dy.data(), x.size());
        // std::erf on both sides: held to the plain reference (the library's fast GELU is a few ulps away)
        CHECK(attn::max_abs_diff(gpu::to_host(dy, x.shape(0), x.shape(1)), spec::gelu(x)) < 1e-6);

        gpu::DeviceBuffer dz = gpu::to_device(x, "z");
        gpu::bias_add(dz.data(), db.data(), static_cast<std::size_t>(N), d);
        CHECK(attn::max_abs_diff(gpu::to_host(dz, x.shape(0), x.shape(1)), Mat(x + bias.value)) == 0.0);

        dy.poison();
        gpu::residual_add(dx.data(), dz.data(), dy.data(), x.size());
        CHECK(attn::max_abs_diff(gpu::to_host(dy, x.shape(0), x.shape(1)), Mat(x + (x + bias.value))) == 0.0);
    }
}

TEST_CASE("the GPU block and stack (kernels run on the CPU) against Model::block_forward", "[gpu-host][kernels]") {
    const attn::ModelConfig config = attn::gpt2_config({.vocab = 11, .max_T = 40, .d_model = 32, .n_heads = 4, .n_layers = 2});
    attn::fast::Model cpu(config, 42);
    attn::Rng rng(9);
    perturb(cpu, rng);
    gpu::GpuTransformer gpu_model(cpu);
    CHECK(gpu_model.n_layers() == 2);
    const std::size_t B = 2, T = 20;
    const Mat x = rng.normal_mat(B * T, config.d_model);
#if defined(ATTN_TSAN)
    // Under ThreadSanitizer (tools/test.sh) what is looked for is a race, and a kernel races or not whatever block it
    // runs in: the block's other kernels are the same for every version, and each version's attention kernels run on
    // their own in "kernels on the CPU: attention v1, v2 and v3" and v2's striding test. One version is enough here:
    // v3, as the stack below. (With v2 this test takes 15 s under TSan, with v3 alone 3.7 s: v2's softmax runs 256
    // CPU threads a row.)
    const AttentionVersion versions[] = {AttentionVersion::v3};
#else
    const AttentionVersion versions[] = {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3};
#endif
    for (AttentionVersion version : versions) {
        INFO(gpu::version_name(version));
        const Mat y_ref = cpu.block_forward(0, x, B, T);
        const Mat y = gpu_model.block_forward(0, x, B, T, version);
        CHECK(attn::max_abs_diff(y, y_ref) < 1e-4);
        // the intermediates, each against the CPU layer that makes it
        attn::Parameters& p = cpu.params();
        attn::fast::LayerNormCache c1;
        const Mat n1 = attn::fast::layernorm_forward(x, p["block0.ln1.gain"], p["block0.ln1.bias"], c1);
        CHECK(attn::max_abs_diff(gpu_model.activation(0, "ln1"), n1) < 1e-5);
        const Mat q = attn::fast::linear_forward(n1, p["block0.W_q"], &p["block0.b_q"]);
        const Mat k = attn::fast::linear_forward(n1, p["block0.W_k"], &p["block0.b_k"]);
        const Mat v = attn::fast::linear_forward(n1, p["block0.W_v"], &p["block0.b_v"]);
        CHECK(attn::max_abs_diff(gpu_model.activation(0, "q"), q) < 1e-4);
        CHECK(attn::max_abs_diff(gpu_model.activation(0, "v"), v) < 1e-4);
        attn::fast::AttentionCache cache;
        const Mat mixed = attn::fast::causal_attention_forward(q, k, v, B, T, config.n_heads, cache);
        CHECK(attn::max_abs_diff(gpu_model.activation(0, "attention"), mixed) < 1e-4);
        const Mat pre_ff = gpu_model.activation(0, "pre_ff");
        CHECK(pre_ff.shape(1) == 4 * config.d_model);
        CHECK(attn::max_abs_diff(gpu_model.activation(0, "hidden"), attn::fast::gelu_forward(pre_ff)) < 1e-6);
    }
    // the stack, activations staying "on the device" between blocks
    const Mat y_stack = gpu_model.forward(x, B, T);
    const Mat ref_stack = cpu.block_forward(1, cpu.block_forward(0, x, B, T), B, T);
    CHECK(attn::max_abs_diff(y_stack, ref_stack) < 1e-4);
    CHECK_THROWS_WITH(gpu_model.activation(0, "nonsense"), Catch::Matchers::Contains("no activation named 'nonsense'"));
    CHECK_THROWS_WITH(gpu_model.block_forward(2, x, B, T), Catch::Matchers::Contains("layer 2 of a stack of 2"));
    CHECK_THROWS_WITH(gpu_model.block_forward(0, x, B, T + 1), Catch::Matchers::Contains("is not (B·T, d_model)"));
}

TEST_CASE("the GPU model's attention with a forward-only kernel: the training path's heads, and no backward after it",
          "[gpu-host][kernels]") {
    using Catch::Matchers::Contains;
    const int B = 2, h = 2, T = 9, d = 8;
    attn::Rng rng(5);
    const std::size_t rows = static_cast<std::size_t>(B) * h * T;
    const Mat q = rng.normal_mat(rows, d), k = rng.normal_mat(rows, d), v = rng.normal_mat(rows, d), dout = rng.normal_mat(rows, d);
    const gpu::DeviceBuffer q_dev = gpu::to_device(q, "q"), k_dev = gpu::to_device(k, "k"), v_dev = gpu::to_device(v, "v");
    const gpu::DeviceBuffer dout_dev = gpu::to_device(dout, "dout");
    const gpu::AttentionShape s{.B = B, .n_heads = h, .T = T, .d_k = d, .d_v = d, .weighting = gpu::Weighting::learned,
                                .causal = true, .scale = 1.0f / std::sqrt(static_cast<float>(d))};
    auto heads = [&](const float* out) { return gpu::to_host(out, rows, static_cast<std::size_t>(d)); };
    gpu::HeadAttention attend(attn::AttentionPath::materialised, 0);
    const Mat trained = heads(attend.forward(q_dev.data(), k_dev.data(), v_dev.data(), s));
    for (AttentionVersion version : {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3}) {
        INFO(gpu::version_name(version));
        attend.use_kernel(version);
        CHECK(attn::max_abs_diff(heads(attend.forward(q_dev.data(), k_dev.data(), v_dev.data(), s)), trained) < 1e-5);
        CHECK_THROWS_WITH(attend.backward(dout_dev.data()),
                          Contains(std::string("forward-only kernel (attention ") + gpu::version_name(version) + ")"));
    }
    // What the kernels do not compute is refused, not computed otherwise: ALiBi, no scale, no mask.
    const gpu::DeviceBuffer slopes = gpu::to_device(Mat{{0.5f, 0.25f}}, "slopes");
    gpu::AttentionShape alibi = s, unscaled = s, unmasked = s;
    alibi.alibi_slopes = slopes.data(), unscaled.scale = 1.0f, unmasked.causal = false;
    for (const gpu::AttentionShape& other : {alibi, unscaled, unmasked})
        CHECK_THROWS_WITH(attend.forward(q_dev.data(), k_dev.data(), v_dev.data(), other), Contains("scaled by 1/sqrt(d_head), without ALiBi, only"));
    // Back to the training path: the same heads, and a backward.
    attend.use_kernel(std::nullopt);
    CHECK(attn::max_abs_diff(heads(attend.forward(q_dev.data(), k_dev.data(), v_dev.data(), s)), trained) == 0.0);
    CHECK_NOTHROW(attend.backward(dout_dev.data()));
}

TEST_CASE("the GPU block refuses a model whose block it does not compute", "[gpu-host][errors]") {
    const attn::ModelConfig gpt2 = attn::gpt2_config({.vocab = 5, .max_T = 8, .d_model = 8, .n_heads = 2});
    attn::ModelConfig post = gpt2, no_biases = gpt2, rope = gpt2;
    post.norm = attn::Norm::post, no_biases.biases = false, rope.positions = attn::Positions::rope;
    for (const attn::ModelConfig& config : {post, no_biases, rope}) {
        attn::fast::Model cpu(config, 1);
        CHECK_THROWS_WITH(gpu::GpuTransformer(cpu), Catch::Matchers::Contains("the GPU block is GPT-2's pre-norm block"));
    }
    attn::fast::Model cpu(gpt2, 1);
    CHECK_NOTHROW(gpu::GpuTransformer(cpu));
}

namespace {
// A block reverses its 64 floats through shared memory: each thread writes its own slot, the block waits,
// each thread reads its mirror's slot. Without the barrier a thread may read a slot before its owner has
// written it — on a GPU and in the emulator alike.
__global__ void reverse_kernel(const float* in, float* out, bool barrier) {
    __shared__ float tile[64];
    const unsigned t = threadIdx.x, at = blockIdx.x * 64 + t;
    tile[t] = in[at];
    if (barrier) __syncthreads();
    out[at] = tile[63 - t];
}
std::vector<float> reversed_blocks(bool barrier) {
    std::vector<float> in(128), out(128, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    cuda_on_cpu::launch(reverse_kernel, dim3(2), dim3(64), 0, static_cast<const float*>(in.data()), out.data(), barrier);
    return out;
}
}  // namespace

TEST_CASE("kernels on the CPU: __syncthreads orders shared-memory writes before other threads' reads", "[gpu-host][kernels]") {
    const std::vector<float> out = reversed_blocks(true);
    for (int i = 0; i < 128; ++i) CHECK(out[i] == static_cast<float>((i / 64) * 64 + 63 - i % 64));
}

// Hidden (not discovered, not run by default): ctest --preset tsan runs it alone and passes only if
// ThreadSanitizer reports the data race the missing barrier makes (tests/CMakeLists.txt).
TEST_CASE("a planted race: the reversal without its __syncthreads", "[.]") { reversed_blocks(false); }

TEST_CASE("ATTN_GPU_SYNC: which values switch the debug mode on (a wait after every launch)", "[gpu-host]") {
    CHECK_FALSE(attn::gpu::sync_requested(nullptr));  // unset
    for (const char* off : {"", "0", "no", "off", "false"}) {
        INFO("ATTN_GPU_SYNC=" << off);
        CHECK_FALSE(attn::gpu::sync_requested(off));
    }
    for (const char* on : {"1", "yes", "on", "true", "kernel"}) {
        INFO("ATTN_GPU_SYNC=" << on);
        CHECK(attn::gpu::sync_requested(on));
    }
}
