// Section 9.8 — the block on the GPU.
//
// The same pre-norm Transformer block, built once from one seed, computed on the CPU (the library) and on
// the GPU (common/gpu: CUDA kernels and cuBLAS), tensor by tensor side by side. Then the chapter's n²
// table for one attention layer (d = 512, 8 heads, batch 1, fp32), measured on this GPU for three kernels
// (kLegend below) beside the CPU library. v1 and v2 run out of memory where the matrix outgrows the card;
// v3 goes on. Every output is filled with NaN before its kernel runs, and every version is compared with
// the CPU's result, never with another version.
//
// compare.cpp is the first part, wall.cpp the table; claims.cpp decides C31 from it. Without a CUDA
// device the program says so and exits 77 (tools/tour.sh and ctest report it as skipped).
#include <iostream>
#include <string>
#include <vector>

#include "attention_train.hpp"
#include "buffer.hpp"
#include "chapters/11_gpu_block/claims.hpp"
#include "chapters/11_gpu_block/compare.hpp"
#include "chapters/11_gpu_block/wall.hpp"
#include "gpu.hpp"
#include "launch.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/table.hpp"

using namespace attn;
using namespace attn::sec11;  // this section's two parts (chapters/11_gpu_block/)

namespace {
constexpr const char* kLegend =
    "The versions (common/gpu/attention.cu; the chapter's ladder, as llm.c's dev/cuda kernels):\n"
    "  v1   naive: one thread per query row, three kernels (scores, softmax, mix), the (h, T, T) scores in\n"
    "       global memory, every key and value row read from global memory by every thread\n"
    "  v2   cuBLAS for q·kᵀ and weights·v around one fused scale + mask + softmax kernel: fast products, but\n"
    "       the (h, T, T) matrix is still in memory, and cuBLAS also computes its masked half\n"
    "  v3   tiled, FlashAttention's online softmax: 64-row query tiles walk 64-key tiles in shared memory;\n"
    "       no T × T matrix exists, memory is O(T·d_head)\n"
    "  CPU  the fast engine's attn::fast::causal_attention_forward (OpenBLAS, this machine's cores): what\n"
    "       every version is checked against\n";
}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int B = 2, T = 256, d_model = 512, n_heads = 8, n_layers = 2, min_T = 128, max_T = 131072, device_mb = 0;
    bool no_table = false, skipped = false;
    Cli cli("11_gpu_block", "Section 9.8 — The block on the GPU (khối Transformer trên GPU)");
    cli.add("--seed", seed, "random seed (the model's weights and the input)");
    cli.add("--B", B, "sequences in the CPU/GPU comparison; the CPU side is the slow one", 1, 64);
    cli.add("--T", T, "tokens per sequence in the CPU/GPU comparison; the CPU side is the slow one", 1, 4096);
    cli.add("--d-model", d_model, "model width, for the comparison and the table; a multiple of --heads", 8, 4096);
    cli.add("--heads", n_heads, "attention heads (d_model / heads ≤ 128 for v1 and v3)", 1, 512);
    cli.add("--layers", n_layers, "blocks in the compared stack; GPT-2 XL has 48", 1, 48);
    cli.add("--min-T", min_T, "first row of the n² table (tokens); rows past the device's memory are reported, not run", 1, 1 << 24);
    cli.add("--max-T", max_T, "last row of the n² table: rows double from --min-T up to this", 1, 1 << 24);
    cli.add("--device-mb", device_mb, "pretend the device has this many MiB (0: all of it), e.g. 8192 for the chapter's 8 GB card; up to 1 TiB",
            0, 1 << 20);
    cli.add_switch("--no-table", no_table, "only the CPU/GPU comparison, not the n² table");

    const int rc = run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        const gpu::DeviceInfo info = gpu::query_device();
        if (info.count == 0) {
            std::cout << "No CUDA device was found, so this section is skipped (the CUDA runtime says: " << info.why_none << ").\n"
                      << "The kernels' logic is still tested on the CPU (unit tests, [gpu-host]); tools/gpu_check.sh runs\n"
                      << "everything on a machine with a GPU.\n";
            skipped = true;
            return;
        }
        require(d_model % n_heads == 0, "11_gpu_block",
                "--d-model " + std::to_string(d_model) + " is not divisible by --heads " + std::to_string(n_heads));
        require(min_T <= max_T, "11_gpu_block", "--min-T " + std::to_string(min_T) + " exceeds --max-T " + std::to_string(max_T));
        // v3's tile of keys and values sits in shared memory: at d_head 65-128 more than a consumer card lets a block have
        const int d_head = d_model / n_heads;
        if (d_head <= gpu::kMaxDHead && gpu::v3_shared_bytes(gpu::v3_padded_d_head(d_head)) > gpu::device_shared_bytes_per_block())
            throw Error("11_gpu_block: at d_head " + std::to_string(d_head) + " the tiled kernel v3 needs " +
                        std::to_string(gpu::v3_shared_bytes(gpu::v3_padded_d_head(d_head))) + " bytes of shared memory a block; this " +
                        "card allows " + std::to_string(gpu::device_shared_bytes_per_block()) +
                        ": give --heads so that --d-model / --heads is 64 or less");
        const double peak = info.fp32_peak_flops();
        std::cout << "device: " << info.name << ", compute capability " << info.cc_major << "." << info.cc_minor << ", "
                  << info.sm_count << " SMs × " << info.fp32_cores_per_sm << " FP32 cores at " << info.clock_khz / 1000
                  << " MHz → fp32 peak " << (peak > 0 ? fmt(peak / 1e12, 1) + " TFLOP/s" : std::string("unknown")) << ", "
                  << fmt_count(static_cast<long long>(info.memory_bytes >> 20)) << " MiB\n";
        if (device_mb > 0) {
            gpu::ledger().set_limit(static_cast<std::size_t>(device_mb) << 20);
            std::cout << "--device-mb " << device_mb << ": allocations past " << device_mb
                      << " MiB fail as on a card of that size\n";
        }
        std::cout << "\n" << kLegend;
        ClaimReport claims;

        // --- 1. one model, two machines ----------------------------------------------------------------------
        compare_cpu_gpu({.seed = seed, .B = B, .T = T, .d_model = d_model, .n_heads = n_heads, .n_layers = n_layers});

        // --- 2. the n² table --------------------------------------------------------------------------------
        if (no_table) {
            claims.skip("C31", "--no-table");
            claims.print(std::cout);
            return;
        }
        std::cout << "\nOne attention layer, d = " << d_model << ", " << n_heads << " heads, batch 1, fp32, on this GPU. ms: the\n"
                  << "attention alone (split q, k, v in, heads out), best of up to 10 runs after a warm-up, CUDA events;\n"
                  << "projections: the four products W_q, W_k, W_v, W_o with the head split and merge. MB: the allocator's\n"
                  << "byte count (MiB), at its peak during the whole layer: x, q, k, v, their heads, the output, the weights\n"
                  << "and cuBLAS's 32 MiB workspace, plus the (h, T, T) scores for v1 and v2.\n";
        const WallSetup wall{.seed = seed, .d_model = d_model, .n_heads = n_heads, .min_T = min_T, .max_T = max_T};
        const std::vector<Row> table = measure_wall(wall);
        add_c31_claim(claims, print_wall(std::cout, table, wall, info), d_model, n_heads);
        claims.print(std::cout);
    });
    return rc == 0 && skipped ? 77 : rc;
}
