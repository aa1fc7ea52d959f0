// Exercises 11.1–11.3 (Section 9.8, kernels on the GPU). One source, run in two places:
//   - on the CPU, in exercise_tests and solution_tests like every other exercise: the kernels' source is
//     compiled as C++ and run by the emulator (gpu_exercises_on_cpu.cpp), on any machine;
//   - on the device, in gpu_exercise_tests and gpu_solution_tests (built where nvcc exists; without a
//     device they say so and return 77, which ctest reports as SKIPPED).
// Every output buffer is NaN until the kernel writes it, so an element a kernel skips fails the check.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "expect.hpp"

#include "11_gpu/gpu_exercises.hpp"
#include "attn/layers.hpp"
#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"
#include "buffer.hpp"
#include "ops.hpp"
#include "transformer_gpu.hpp"

using attn::Mat;
namespace gpu = attn::gpu;

// Varies: (rows, cols) from (1, 1) to (5, 4099) (fewer and more columns than threads, not a multiple of 256);
// scores shifted by +200 (exp overflows without the max shift) and by −200 (every exp underflows unless the
// max starts at −inf).
TEST_CASE("Exercise 11.1: softmax_rows_gpu — a block per row, max and sum by reductions", "[ex11.1][sec11]") {
    attn::Rng rng(1101);
    // The last cases shift every score by +200: exp(200) overflows fp32, so only a softmax that subtracts the
    // row's max gets it right; and by −200: exp(−200) underflows to 0, so a max that starts at 0 gives 0/0.
    for (const auto& [rows, cols, shift] : {std::tuple{1, 1, 0.0f}, {3, 7, 0.0f}, {64, 300, 0.0f}, {5, 4099, 0.0f}, {4, 33, 200.0f}, {2, 300, -200.0f}}) {
        const Mat scores = rng.normal_mat(rows, cols) * 8.0f + shift;
        const gpu::DeviceBuffer d_scores = gpu::to_device(scores, "scores");
        gpu::DeviceBuffer d_weights(scores.size(), "weights");
        d_weights.poison();
        ex::softmax_rows_gpu(d_scores.data(), d_weights.data(), rows, cols);
        gpu::synchronize();
        INFO("(rows, cols) = (" << rows << ", " << cols << ")");
        // fp32 exp on the device and the host, sums of up to 4099 terms in another order: ~10 ulps of a weight ≤ 1
        if (!ex_test::expect_close(gpu::to_host(d_weights, rows, cols), attn::softmax_rows(scores), 1e-5,
                                   "scores (" + std::to_string(rows) + ", " + std::to_string(cols) + ")"))
            break;
    }
}

// Varies: (N, d) from (1, 1) to (100, 512) and (3, 3000) (rows not a multiple of 8 warps, d below and above 32),
// rows of std 2 and of std 0.01; random gain and bias.
TEST_CASE("Exercise 11.2: layernorm_gpu — a warp per row, shuffle sums", "[ex11.2][sec11]") {
    attn::Rng rng(1102);
    attn::Parameters p;
    // Rows of mean 3 and std 2; and rows of std 0.01 (variance 1e-4, ten times the epsilon), where the epsilon
    // must sit inside the square root and the one-pass E[x²] − mean² in fp32 loses about 1 % of the variance.
    for (const auto& [N, d, std, mean] : {std::tuple{1, 1, 2.0f, 3.0f}, {9, 31, 2.0f, 3.0f}, {100, 512, 2.0f, 3.0f},
                                           {3, 3000, 2.0f, 3.0f}, {4, 64, 0.01f, 0.5f}}) {
        const Mat x = rng.normal_mat(N, d) * std + mean;
        attn::Param& gain = p.normal("g" + std::to_string(N) + "_" + std::to_string(d), 1, d, 1.0f, rng);
        attn::Param& bias = p.normal("b" + std::to_string(N) + "_" + std::to_string(d), 1, d, 1.0f, rng);
        attn::LayerNormCache cache;
        const Mat ref = attn::layernorm_forward(x, gain, bias, cache);
        const gpu::DeviceBuffer dx = gpu::to_device(x, "x"), dg = gpu::to_device(gain.value, "gain"),
                                db = gpu::to_device(bias.value, "bias");
        gpu::DeviceBuffer dy(x.size(), "y");
        dy.poison();
        ex::layernorm_gpu(dx.data(), dg.data(), db.data(), dy.data(), N, d);
        gpu::synchronize();
        INFO("(N, d) = (" << N << ", " << d << ")");
        // |y| up to ~10 here: a few ulps of it
        if (!ex_test::expect_close(gpu::to_host(dy, N, d), ref, 1e-4, "x (" + std::to_string(N) + ", " + std::to_string(d) + ")")) break;
    }
}

// Varies: n = 1, 1000 and 700,000 (more than one thread per element of the launched grid), inputs of spread 3.
TEST_CASE("Exercise 11.3: gelu_gpu — elementwise, any n", "[ex11.3][sec11]") {
    attn::Rng rng(1103);
    for (const auto& [rows, cols] : {std::pair{1, 1}, {1, 1000}, {700, 1000}}) {  // 700,000 > one thread per element of a 256×256 grid
        const Mat x = rng.normal_mat(rows, cols) * 3.0f;
        const gpu::DeviceBuffer dx = gpu::to_device(x, "x");
        gpu::DeviceBuffer dy(x.size(), "y");
        dy.poison();
        ex::gelu_gpu(dx.data(), dy.data(), static_cast<long long>(x.size()));
        gpu::synchronize();
        INFO("n = " << x.size());
        if (!ex_test::expect_close(gpu::to_host(dy, rows, cols), attn::gelu_forward(x), 1e-5,
                                   "x (" + std::to_string(rows) + ", " + std::to_string(cols) + ")"))
            break;
    }
}
