// Exercises 11.1–11.3 (Section 9.8, kernels on the GPU). One source, run in two places:
//   - on the CPU, in exercise_tests and solution_tests like every other exercise: the kernels' source is
//     compiled as C++ and run by the emulator (gpu_exercises_on_cpu.cpp), on any machine;
//   - on the device, in gpu_exercise_tests and gpu_solution_tests (built where nvcc exists; without a
//     device they say so and return 77, which ctest reports as SKIPPED).
// Every output buffer is NaN until the kernel writes it, so an element a kernel skips fails the check.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <tuple>

#include "../spec.hpp"
#include "expect.hpp"
#include "property.hpp"

#include "11_gpu/gpu_exercises.hpp"
#include "buffer.hpp"
#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
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
        attn::fast::LayerNormCache cache;
        const Mat ref = attn::fast::layernorm_forward(x, gain, bias, cache);
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
        if (!ex_test::expect_close(gpu::to_host(dy, rows, cols), attn::fast::gelu_forward(x), 1e-5,
                                   "x (" + std::to_string(rows) + ", " + std::to_string(cols) + ")"))
            break;
    }
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp): 100 inputs each, as every other
// exercise's (on the emulator the three properties take about half a second together)
namespace {
namespace prop = ex_test::prop;
// A kernel call with no work (0 rows, 0 columns, n = 0) must write nothing and not fail: "" when it did not.
template <class Call>
std::string no_work(const std::string& fn, Call&& call, const std::string& input) {
    gpu::DeviceBuffer out(1, "out");
    out.poison();
    call(out.data());
    gpu::synchronize();
    float y = 0;
    out.download(&y, 1);
    if (std::isnan(y)) return "";
    return "your " + fn + " writes to its output for " + input + "; with no work the contract writes nothing\n[vi] " + fn + " của bạn ghi vào đầu ra với " +
           input + "; khi không có việc, hợp đồng không ghi gì";
}
}  // namespace

// rows 1..5 and cols 1..600 (more and fewer columns than 256 threads), scores up to 10^4 in size, ties; and no
// work (rows or cols 0). Within 1e-5 of the double oracle (absolute: every weight is at most 1).
TEST_CASE("Exercise 11.1: softmax_rows_gpu — property: any shape, huge scores, no work", "[ex11.1][sec11][property]") {
    prop::check("softmax_rows_gpu over rows 0..5, cols 0..600", [](prop::Case& c) {
        const std::size_t rows = prop::size(0, 5), cols = prop::size(0, *rc::gen::element<std::size_t>(8, 600));
        const Mat scores = prop::mat(rows, cols, prop::range({1, 100, 1e4}));
        c.input = "scores " + prop::show(scores);
        if (rows == 0 || cols == 0)
            return no_work("softmax_rows_gpu", [&](float* out) { ex::softmax_rows_gpu(out, out, static_cast<int>(rows), static_cast<int>(cols)); }, c.input);
        const gpu::DeviceBuffer d_scores = gpu::to_device(scores, "scores");
        gpu::DeviceBuffer d_weights(scores.size(), "weights");
        d_weights.poison();
        ex::softmax_rows_gpu(d_scores.data(), d_weights.data(), static_cast<int>(rows), static_cast<int>(cols));
        gpu::synchronize();
        return prop::compare("softmax_rows_gpu", gpu::to_host(d_weights, rows, cols), spec::softmax_rows(scores), 1e-5, c.input);
    });
}

// N 1..20 (not a multiple of 8 warps), d 1..300, rows around 0 or 10 with spreads 0.01 to 10 (constant rows
// among them), gain and bias up to 10; and no work. Within 1e-5 of the double oracle, relative to the size of the
// terms an fp32 x − mean cancels (|gain| (|x| + |mean|) / √(var + 1e-5)), above 1.
TEST_CASE("Exercise 11.2: layernorm_gpu — property: any shape and spread, no work", "[ex11.2][sec11][property]") {
    prop::check("layernorm_gpu over N 0..20, d 0..300", [](prop::Case& c) {
        const std::size_t N = prop::size(0, 20), d = prop::size(0, *rc::gen::element<std::size_t>(8, 300));
        const Mat x = prop::mat(N, d, prop::range({0.01, 1, 10})) + *rc::gen::element(0.0f, 10.0f);
        const Mat gain = prop::mat(1, d, prop::range({1, 10})), bias = prop::mat(1, d, prop::range({1, 10}));
        c.input = "x " + prop::show(x) + ", gain " + prop::show(gain) + ", bias " + prop::show(bias);
        if (N == 0 || d == 0)
            return no_work("layernorm_gpu", [&](float* out) { ex::layernorm_gpu(out, out, out, out, static_cast<int>(N), static_cast<int>(d)); }, c.input);
        Mat want = Mat::from_shape({N, d}), scale = Mat::from_shape({N, d});
        for (std::size_t r = 0; r < N; ++r) {
            double mean = 0, var = 0;
            for (std::size_t j = 0; j < d; ++j) mean += x(r, j) / static_cast<double>(d);
            for (std::size_t j = 0; j < d; ++j) var += (x(r, j) - mean) * (x(r, j) - mean) / static_cast<double>(d);
            for (std::size_t j = 0; j < d; ++j) {
                want(r, j) = static_cast<float>(gain(0, j) * (x(r, j) - mean) / std::sqrt(var + 1e-5) + bias(0, j));
                scale(r, j) = static_cast<float>(std::fabs(gain(0, j)) * (std::fabs(x(r, j)) + std::fabs(mean)) / std::sqrt(var + 1e-5) + std::fabs(bias(0, j)));
            }
        }
        const gpu::DeviceBuffer dx = gpu::to_device(x, "x"), dg = gpu::to_device(gain, "gain"), db = gpu::to_device(bias, "bias");
        gpu::DeviceBuffer dy(x.size(), "y");
        dy.poison();
        ex::layernorm_gpu(dx.data(), dg.data(), db.data(), dy.data(), static_cast<int>(N), static_cast<int>(d));
        gpu::synchronize();
        return prop::compare("layernorm_gpu", gpu::to_host(dy, N, d), want, 1e-5, c.input, {}, &scale);
    });
}

// n from 0 to 70,000 (past one element a thread of a 256 × 256 grid), x up to ±100; 20 inputs (the largest
// launch 65,536 emulated threads: 20 keep the test near 0.4 s, 40 take a second). Within 1e-5 of the double GELU, relative above 1.
TEST_CASE("Exercise 11.3: gelu_gpu — property: any n, x up to ±100, no work", "[ex11.3][sec11][property]") {
    prop::check("gelu_gpu over n 0..200000", [](prop::Case& c) {
        const std::size_t n = prop::size(0, *rc::gen::element<std::size_t>(16, 70000));
        const Mat x = prop::mat(1, n, prop::range({1, 5, 100}));
        c.input = "x " + prop::show(x);
        if (n == 0) return no_work("gelu_gpu", [&](float* out) { ex::gelu_gpu(out, out, 0); }, c.input);
        Mat want = Mat::from_shape({std::size_t{1}, n});
        for (std::size_t i = 0; i < n; ++i) want(0, i) = static_cast<float>(0.5 * x(0, i) * (1 + std::erf(x(0, i) / std::sqrt(2.0))));
        const gpu::DeviceBuffer dx = gpu::to_device(x, "x");
        gpu::DeviceBuffer dy(x.size(), "y");
        dy.poison();
        ex::gelu_gpu(dx.data(), dy.data(), static_cast<long long>(n));
        gpu::synchronize();
        return prop::compare("gelu_gpu", gpu::to_host(dy, std::size_t{1}, n), want, 1e-5, c.input);
    }, 20);
}
