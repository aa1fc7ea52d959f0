// GPU tests: each kernel against the CPU library. With no device this program says so and returns
// 77, which ctest reports as SKIPPED (SKIP_RETURN_CODE) — never as passed.
#include <cstdio>
#include <iostream>

#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"
#include "gpu.hpp"

int main() {
    const attn::gpu::DeviceInfo info = attn::gpu::query_device();
    if (info.count == 0) {
        std::cout << "SKIPPED: no CUDA device (" << info.why_none << ")\n";
        return 77;
    }
    std::cout << "device: " << info.name << ", " << info.sm_count << " SMs, " << info.clock_khz / 1000 << " MHz, "
              << info.memory_bytes / (1 << 20) << " MiB\n";
    int failures = 0;
    attn::Rng rng(1);
    for (const auto& [rows, cols] : {std::pair{1, 1}, {3, 7}, {64, 64}, {128, 1000}, {17, 4096}}) {
        const attn::Mat scores = rng.normal_mat(rows, cols) * 8.0f;
        attn::Mat gpu = attn::Mat::from_shape(scores.shape());
        attn::gpu::softmax_rows(scores.data(), gpu.data(), rows, cols);
        const double diff = attn::max_abs_diff(gpu, attn::softmax_rows(scores));
        const bool ok = diff < 1e-6;  // fp32 exp on device vs host: a few ulps
        failures += !ok;
        std::printf("softmax_rows (%d, %d): max |diff| vs CPU %.2e %s\n", rows, cols, diff, ok ? "ok" : "FAIL");
    }
    std::cout << (failures ? "FAILED" : "all GPU checks passed") << "\n";
    return failures ? 1 : 0;
}
