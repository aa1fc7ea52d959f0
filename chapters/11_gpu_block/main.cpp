// Section 9.8 — the block on the GPU.
//
// The same pre-norm Transformer block, built once from one seed, computed on the CPU (the library) and on
// the GPU (common/gpu: CUDA kernels and cuBLAS), tensor by tensor side by side. Then the chapter's n²
// table for one attention layer (d = 512, 8 heads, batch 1, fp32), measured on this GPU for three kernels
// (kLegend below) beside the CPU library. v1 and v2 run out of memory where the matrix outgrows the card;
// v3 goes on. Every output is filled with NaN before its kernel runs, and every version is compared with
// the CPU's result, never with another version.
//
// Without a CUDA device it says so and exits 77 (tools/tour.sh and ctest report it as skipped).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "attn/claims.hpp"
#include "attn/cli.hpp"
#include "attn/layers.hpp"
#include "attn/multi_head.hpp"
#include "attn/rng.hpp"
#include "attn/table.hpp"
#include "attn/model.hpp"
#include "buffer.hpp"
#include "gpu.hpp"
#include "launch.hpp"
#include "ops.hpp"
#include "transformer_gpu.hpp"

using namespace attn;
using gpu::AttentionVersion;

namespace {
constexpr std::array<AttentionVersion, 3> kVersions = {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3};
constexpr const char* kLegend =
    "The versions (common/gpu/attention.cu; the chapter's ladder, as llm.c's dev/cuda kernels):\n"
    "  v1   naive: one thread per query row, three kernels (scores, softmax, mix), the (h, T, T) scores in\n"
    "       global memory, every key and value row read from global memory by every thread\n"
    "  v2   cuBLAS for q·kᵀ and weights·v around one fused scale + mask + softmax kernel: fast products, but\n"
    "       the (h, T, T) matrix is still in memory, and cuBLAS also computes its masked half\n"
    "  v3   tiled, FlashAttention's online softmax: 64-row query tiles walk 64-key tiles in shared memory;\n"
    "       no T × T matrix exists, memory is O(T·d_head)\n"
    "  CPU  the library's attn::causal_attention_forward (OpenBLAS, this machine's cores): the reference\n"
    "       every version is compared with\n";

double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// --- part 1: one model, two machines ----------------------------------------------------------------------
struct Compared {
    std::string tensor, shape;
    double max_diff;
    double abs_tol, rel_tol;
    bool ok;
};

Compared compare(const std::string& tensor, const Mat& gpu_value, const Mat& cpu_value, double abs_tol, double rel_tol) {
    Compared c{tensor, shape_str(cpu_value), 0.0, abs_tol, rel_tol, gpu_value.shape() == cpu_value.shape()};
    for (std::size_t i = 0; c.ok && i < cpu_value.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(gpu_value.data()[i]) - cpu_value.data()[i]);
        c.max_diff = std::max(c.max_diff, diff);
        if (!(diff <= abs_tol + rel_tol * std::fabs(cpu_value.data()[i]))) c.ok = false;  // NaN fails
    }
    return c;
}

// --- part 2: one attention layer at n tokens ----------------------------------------------------------------
// What one (version, n) cell measured.
struct Measured {
    enum class State { ran, out_of_memory, too_slow, not_run } state = State::not_run;
    double ms = 0;            // the attention alone (q, k, v split into heads → out), best of the timed runs
    std::size_t peak = 0;     // the ledger's peak during the whole layer forward, bytes
    double diff_cpu = -1;     // max |out − the CPU's out| at this row (−1: the CPU did not run; NaN: out has NaN)
    bool finite = true;       // every output written (it was NaN before the kernel) and finite
};
struct Row {
    int T = 0;
    bool layer_oom = false;   // even q, k, v did not fit
    double proj_ms = 0;       // the four projections and the head split/merge
    double cpu_ms = -1;       // the CPU library's attention on the same q, k, v (−1: not run, too slow)
    std::array<Measured, 3> cells;
};

// One attention sub-layer's weights on the device: W_q, W_k, W_v, W_o (d, d) and their biases (1, d).
struct AttentionWeights {
    gpu::DeviceBuffer W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o;
};

// The buffers of one forward at T tokens (batch 1): x, q, k, v, the heads, the output.
struct LayerBuffers {
    gpu::DeviceBuffer x, q, k, v, q_h, k_h, v_h, out_h, merged, y;
    LayerBuffers(std::size_t T, std::size_t d)
        : x(T * d, "x (T, d)"), q(T * d, "q (T, d)"), k(T * d, "k (T, d)"), v(T * d, "v (T, d)"), q_h(T * d, "q heads"),
          k_h(T * d, "k heads"), v_h(T * d, "v heads"), out_h(T * d, "out heads"), merged(T * d, "merged (T, d)"),
          y(T * d, "y (T, d)") {}
};

void projections_in(const AttentionWeights& w, LayerBuffers& b, int T, int d, int h) {
    gpu::linear(b.x.data(), w.W_q.data(), w.b_q.data(), b.q.data(), T, d, d);
    gpu::linear(b.x.data(), w.W_k.data(), w.b_k.data(), b.k.data(), T, d, d);
    gpu::linear(b.x.data(), w.W_v.data(), w.b_v.data(), b.v.data(), T, d, d);
    gpu::split_heads(b.q.data(), b.q_h.data(), 1, T, h, d / h);
    gpu::split_heads(b.k.data(), b.k_h.data(), 1, T, h, d / h);
    gpu::split_heads(b.v.data(), b.v_h.data(), 1, T, h, d / h);
}
void projection_out(const AttentionWeights& w, LayerBuffers& b, int T, int d, int h) {
    gpu::merge_heads(b.out_h.data(), b.merged.data(), 1, T, h, d / h);
    gpu::linear(b.merged.data(), w.W_o.data(), w.b_o.data(), b.y.data(), T, d, d);
}

// Best of `first` (a run already made, which warmed up the kernels) and up to ten more, fewer when a run
// is slow: about a second of timed runs per cell, and none more past a second.
double best_ms(double first, const std::function<void()>& work) {
    const int reps = std::clamp(static_cast<int>(1000.0 / std::max(first, 1e-3)), 0, 10);
    double best = first;
    for (int r = 0; r < reps; ++r) best = std::min(best, gpu::time_ms(work));
    return best;
}

// Least-squares slope of log y against log n over the last (up to) four points: y ~ n^slope.
std::optional<double> fitted_exponent(const std::vector<std::pair<double, double>>& points) {
    if (points.size() < 2) return std::nullopt;
    const std::size_t from = points.size() > 4 ? points.size() - 4 : 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double m = static_cast<double>(points.size() - from);
    for (std::size_t i = from; i < points.size(); ++i) {
        const double x = std::log(points[i].first), y = std::log(points[i].second);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}
std::string exponent_text(const std::optional<double>& e) { return e ? "n^" + fmt(*e, 2) : "-"; }

// Part 1: builds one model from the seed, runs block 0 and the stack on both, prints each tensor's
// difference; throws if any is out of its tolerance. The GPU model's device memory is freed on return.
void compare_cpu_gpu(std::uint64_t seed, int B, int T, int d_model, int n_heads, int n_layers) {
    const ModelConfig config = gpt2_config({.vocab = 64, .max_T = static_cast<std::size_t>(T), .d_model = static_cast<std::size_t>(d_model),
                                            .n_heads = static_cast<std::size_t>(n_heads), .n_layers = static_cast<std::size_t>(n_layers)});
    Model cpu(config, seed);
    Rng rng(seed, 11);
    // Biases start at 0 and gains at 1: a forgotten bias add or gain would go unseen. Nudge every parameter.
    for (Param& p : cpu.params().all())
        for (float& w : p.value) w += 0.1f * static_cast<float>(rng.normal());
    gpu::GpuTransformer gpu_model(cpu);
    const std::size_t N = static_cast<std::size_t>(B) * T;
    const Mat x = rng.normal_mat(N, static_cast<std::size_t>(d_model));  // (B·T, d_model), N(0, 1)
    std::cout << "\nOne pre-norm model (d_model = " << d_model << ", " << n_heads << " heads, d_ff = " << 4 * d_model << ", "
              << n_layers << " blocks), built from --seed " << seed << " once on the CPU\n"
              << "and once on the GPU, every parameter nudged off its initial value; x (B·T, d_model) = (" << B << "·" << T
              << ", " << d_model << "), N(0, 1).\n"
              << "A tensor agrees when every entry is within abs + rel·|cpu|: fp32 on both sides, summed in other orders\n"
              << "(cuBLAS vs OpenBLAS, tree vs loop reductions, the online vs the two-pass softmax).\n\n";

    std::vector<Compared> rows;
    Parameters& p = cpu.params();
    LayerNormCache c1, c2;
    const Mat n1 = layernorm_forward(x, p["block0.ln1.gain"], p["block0.ln1.bias"], c1);
    const Mat q = linear_forward(n1, p["block0.W_q"], &p["block0.b_q"]);
    const Mat k = linear_forward(n1, p["block0.W_k"], &p["block0.b_k"]);
    const Mat v = linear_forward(n1, p["block0.W_v"], &p["block0.b_v"]);
    AttentionCache cache;
    const Mat mixed = causal_attention_forward(q, k, v, B, T, n_heads, cache);
    const Mat a = x + linear_forward(mixed, p["block0.W_o"], &p["block0.b_o"]);
    const Mat n2 = layernorm_forward(a, p["block0.ln2.gain"], p["block0.ln2.bias"], c2);
    const Mat hidden = gelu_forward(linear_forward(n2, p["block0.W_1"], &p["block0.b_1"]));
    const Mat y0 = cpu.block_forward(0, x, B, T);
    // The attention's tolerance scales with its inputs: fp32 rounds a score q·k/√d_head, a sum of d_head
    // products, by at most d_head·u·max|q|·max|k|/√d_head on each side (u = 2^-24), and a score off by δ moves
    // the output by at most 2δ·max|v|. At T = 256 on an H200 the three versions differed from the CPU by
    // 3.0e-5, outside a fixed 1e-5 + 1e-4·|cpu| (docs/gpu/); a wrong scale or mask is off by O(|v|).
    const double u = 0x1.0p-24, d_head = static_cast<double>(d_model / n_heads);
    const double score_err = 2 * d_head * u * static_cast<double>(xt::amax(xt::abs(q))()) *
                             static_cast<double>(xt::amax(xt::abs(k))()) / std::sqrt(d_head);
    const double attention_abs = 1e-5 + 2 * score_err * static_cast<double>(xt::amax(xt::abs(v))());
    for (AttentionVersion version : {AttentionVersion::v1, AttentionVersion::v2}) {
        gpu_model.block_forward(0, x, B, T, version);
        rows.push_back(compare(std::string("block 0  attention ") + gpu::version_name(version) + " (heads merged)",
                               gpu_model.activation(0, "attention"), mixed, attention_abs, 1e-4));
    }
    const Mat y0_gpu = gpu_model.block_forward(0, x, B, T, AttentionVersion::v3);
    rows.push_back(compare("block 0  attention v3 (heads merged)", gpu_model.activation(0, "attention"), mixed, attention_abs, 1e-4));
    rows.insert(rows.begin(), {compare("block 0  LN_1(x)", gpu_model.activation(0, "ln1"), n1, 1e-5, 1e-5),
                               compare("block 0  q = LN_1(x) W_q + b_q", gpu_model.activation(0, "q"), q, 1e-5, 1e-4),
                               compare("block 0  k = LN_1(x) W_k + b_k", gpu_model.activation(0, "k"), k, 1e-5, 1e-4),
                               compare("block 0  v = LN_1(x) W_v + b_v", gpu_model.activation(0, "v"), v, 1e-5, 1e-4)});
    rows.push_back(compare("block 0  a = x + attention W_o + b_o", gpu_model.activation(0, "a"), a, 1e-4, 1e-4));
    rows.push_back(compare("block 0  LN_2(a)", gpu_model.activation(0, "ln2"), n2, 1e-4, 1e-4));
    rows.push_back(compare("block 0  gelu(LN_2(a) W_1 + b_1)", gpu_model.activation(0, "hidden"), hidden, 1e-4, 1e-4));
    rows.push_back(compare("block 0  y (vs Model::block_forward)", y0_gpu, y0, 1e-4, 1e-4));
    Mat ref_stack = y0;
    for (int l = 1; l < n_layers; ++l) ref_stack = cpu.block_forward(static_cast<std::size_t>(l), ref_stack, B, T);
    rows.push_back(compare("stack of " + std::to_string(n_layers) + " blocks, y (v3)", gpu_model.forward(x, B, T), ref_stack,
                           1e-4 * n_layers, 1e-4 * n_layers));
    std::printf("  %-44s %-12s %11s   %-22s\n", "tensor (GPU vs CPU)", "shape", "max |diff|", "tolerance (abs + rel·|cpu|)");
    bool all_close = true;
    for (const Compared& c : rows) {
        const std::string tol = fmt_sci(c.abs_tol, 0) + " + " + fmt_sci(c.rel_tol, 0);
        std::printf("  %-44s %-12s %11s   %-22s %s\n", c.tensor.c_str(), c.shape.c_str(), fmt_sci(c.max_diff).c_str(),
                    tol.c_str(), c.ok ? "ok" : "FAIL");
        all_close = all_close && c.ok;
    }
    std::cout << (all_close ? "  every tensor agrees within its tolerance\n" : "  SOME TENSORS DIFFER (above)\n");
    require(all_close, "11_gpu_block", "the GPU block does not match the CPU block (see the table)");
}

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
        const int d_head = d_model / n_heads;
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
        compare_cpu_gpu(seed, B, T, d_model, n_heads, n_layers);

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
        AttentionWeights w;
        {
            Rng wrng(seed, 12);
            const float s = 1.0f / std::sqrt(static_cast<float>(d_model));
            auto mat = [&](std::size_t r, std::size_t c, const char* name) { return gpu::to_device(wrng.normal_mat(r, c) * s, name); };
            const std::size_t dd = static_cast<std::size_t>(d_model);
            w.W_q = mat(dd, dd, "W_q"), w.W_k = mat(dd, dd, "W_k"), w.W_v = mat(dd, dd, "W_v"), w.W_o = mat(dd, dd, "W_o");
            w.b_q = mat(1, dd, "b_q"), w.b_k = mat(1, dd, "b_k"), w.b_v = mat(1, dd, "b_v"), w.b_o = mat(1, dd, "b_o");
        }
        gpu::MemoryLedger& book = gpu::ledger();
        std::vector<Row> table;
        for (long long n = min_T; n <= max_T; n *= 2) {
            Row row;
            row.T = static_cast<int>(n);
            std::cerr << "  [n² table] T = " << n << " …\n";
            try {
                LayerBuffers buf(static_cast<std::size_t>(n), static_cast<std::size_t>(d_model));
                {
                    Rng xr(seed, 13);
                    const Mat x_in = xr.normal_mat(static_cast<std::size_t>(n), static_cast<std::size_t>(d_model));
                    buf.x.upload(x_in.data(), x_in.size());
                }
                auto projections = [&] {
                    projections_in(w, buf, row.T, d_model, n_heads);
                    projection_out(w, buf, row.T, d_model, n_heads);
                };
                projections();  // warm-up: the first launches, cuBLAS's choice of kernels
                row.proj_ms = best_ms(gpu::time_ms(projections), projections);
                // The CPU library's attention on the same q, k, v (the GPU's projections, copied here): the
                // reference every version is compared with, while it stays under about 10 s (4× per doubling of
                // T) and its (h, T, T) weights under 8 GiB of host memory.
                Mat cpu_out;
                const Row* above = table.empty() ? nullptr : &table.back();
                if ((!above || (above->cpu_ms >= 0 && above->cpu_ms * 4.5 < 10000)) && n <= 16384) {
                    const std::size_t T = static_cast<std::size_t>(n), d = static_cast<std::size_t>(d_model);
                    const Mat q = gpu::to_host(buf.q, T, d), k = gpu::to_host(buf.k, T, d), v = gpu::to_host(buf.v, T, d);
                    AttentionCache cache;
                    const auto t0 = std::chrono::steady_clock::now();
                    cpu_out = causal_attention_forward(q, k, v, 1, T, static_cast<std::size_t>(n_heads), cache);
                    row.cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                }
                for (std::size_t vi = 0; vi < kVersions.size(); ++vi) {
                    const AttentionVersion version = kVersions[vi];
                    Measured& cell = row.cells[vi];
                    // Skip a version whose time, about 4× the previous row's, would pass 20 seconds (and stay skipped).
                    const Measured* before = above ? &above->cells[vi] : nullptr;
                    if (before && (before->state == Measured::State::too_slow ||
                                   (before->state == Measured::State::ran && before->ms * 4.5 > 20000))) {
                        cell.state = Measured::State::too_slow;
                        continue;
                    }
                    book.reset_peak();
                    try {
                        gpu::DeviceBuffer scores;
                        if (version != AttentionVersion::v3)
                            scores = gpu::DeviceBuffer(gpu::attention_matrix_bytes(n_heads, n) / sizeof(float),
                                                       "the scores (h, T, T)");
                        auto attention = [&] {
                            gpu::attention(version, buf.q_h.data(), buf.k_h.data(), buf.v_h.data(), buf.out_h.data(), n_heads,
                                           row.T, d_head, scores.data());
                        };
                        buf.out_h.poison(), buf.merged.poison();  // the previous version's output must not count
                        projections_in(w, buf, row.T, d_model, n_heads);  // the whole layer once, for its peak
                        const double first = gpu::time_ms(attention);
                        projection_out(w, buf, row.T, d_model, n_heads);
                        gpu::synchronize();
                        cell.peak = book.peak();
                        cell.ms = best_ms(first, attention);
                        cell.state = Measured::State::ran;
                        const Mat out = gpu::to_host(buf.merged, static_cast<std::size_t>(n), static_cast<std::size_t>(d_model));
                        cell.finite = std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); });
                        if (cpu_out.size() == out.size()) {
                            double worst = 0;
                            for (std::size_t i = 0; i < out.size(); ++i)
                                worst = std::max(worst, std::fabs(static_cast<double>(out.data()[i]) - cpu_out.data()[i]));
                            cell.diff_cpu = cell.finite ? worst : NAN;
                        }
                    } catch (const gpu::OutOfMemory&) {
                        cell.state = Measured::State::out_of_memory;
                    }
                }
            } catch (const gpu::OutOfMemory&) {
                row.layer_oom = true;
            }
            table.push_back(row);
        }

        const std::vector<std::string> names = {"v1", "v2", "v3"};
        auto ms_cell = [](const Measured& c) -> attn::Cell {
            if (c.state == Measured::State::ran) return c.ms;
            return c.state == Measured::State::out_of_memory ? "OUT OF MEMORY" : c.state == Measured::State::too_slow ? "(too slow)" : "-";
        };
        auto ratio = [](const Row* prev, const Row& row, std::size_t vi, bool memory) -> attn::Cell {
            if (!prev || prev->cells[vi].state != Measured::State::ran || row.cells[vi].state != Measured::State::ran) return "-";
            return memory ? static_cast<double>(row.cells[vi].peak) / static_cast<double>(prev->cells[vi].peak)
                          : row.cells[vi].ms / prev->cells[vi].ms;
        };

        std::cout << "\nTime (ms; x4: the ratio to the row above, doubling n; CPU: one run, std::chrono)\n";
        Table tt(std::cout, {{"tokens", 8, 0}, {"CPU ms", 12, 1}, {"x4", 6, 2}, {"v1 ms", 15, 3}, {"x4", 6, 2}, {"v2 ms", 15, 3},
                             {"x4", 6, 2}, {"v3 ms", 15, 3}, {"x4", 6, 2}, {"ms projections", 16, 3}}, "  ");
        tt.header();
        for (std::size_t r = 0; r < table.size(); ++r) {
            const Row& row = table[r];
            const Row* prev = r > 0 && !table[r - 1].layer_oom ? &table[r - 1] : nullptr;
            if (row.layer_oom) {
                tt.row({row.T, "OUT OF MEMORY"});
                continue;
            }
            const attn::Cell cpu = row.cpu_ms >= 0 ? attn::Cell(row.cpu_ms) : attn::Cell("(too slow)");
            const attn::Cell cpu_ratio = prev && prev->cpu_ms > 0 && row.cpu_ms >= 0 ? attn::Cell(row.cpu_ms / prev->cpu_ms) : attn::Cell("-");
            tt.row({row.T, cpu, cpu_ratio, ms_cell(row.cells[0]), ratio(prev, row, 0, false), ms_cell(row.cells[1]),
                    ratio(prev, row, 1, false), ms_cell(row.cells[2]), ratio(prev, row, 2, false), row.proj_ms});
        }
        // The first rows are too small for the GPU: their times are the launches' fixed cost, not arithmetic.
        if (!table.empty()) {
            const int T0 = table.front().T;
            const long long v3_blocks = gpu::v3_query_tiles(T0) * n_heads, v1_blocks = gpu::v1_blocks(n_heads, T0);
            const long long fill_T = gpu::ceil_div(info.sm_count, n_heads) * gpu::kV3Tile;
            std::cout << "\nWhy the small rows are flat: at T = " << fmt_count(T0) << " v3 launches " << v3_blocks << " blocks of "
                      << gpu::kV3Tile << " threads (v1: " << v1_blocks << " of " << gpu::kV1Threads << ") on a GPU of "
                      << info.sm_count << " SMs,\n"
                      << "each of which could run several blocks at once: most of the GPU has nothing to do, and the time is\n"
                      << "the launches' fixed cost (a few µs each) and one block's latency, not arithmetic. v3 gives every SM\n"
                      << "one block only from T = " << fmt_count(fill_T)
                      << " (h · T/64 blocks), and needs several per SM to hide memory latency;\n"
                      << "the times begin to grow as n² once the GPU is full.\n";
        }

        std::cout << "\nMemory (MiB; attention matrix: h·T²·4 bytes, one of scores or weights; peak: the allocator's)\n";
        Table mt(std::cout, {{"tokens", 8, 0}, {"attn matrix MB", 16, 1}, {"v1 peak MB", 15, 1}, {"v2 peak MB", 15, 1},
                             {"MB x4", 7, 2}, {"v3 peak MB", 15, 1}, {"MB x4", 7, 2}}, "  ");
        mt.header();
        auto mb_cell = [](const Measured& c) -> attn::Cell {
            if (c.state == Measured::State::ran) return mib(c.peak);
            return c.state == Measured::State::out_of_memory ? "OUT OF MEMORY" : "-";
        };
        for (std::size_t r = 0; r < table.size(); ++r) {
            const Row& row = table[r];
            const Row* prev = r > 0 && !table[r - 1].layer_oom ? &table[r - 1] : nullptr;
            const double matrix = mib(gpu::attention_matrix_bytes(n_heads, row.T));
            if (row.layer_oom) {
                mt.row({row.T, matrix, "OUT OF MEMORY"});
                continue;
            }
            mt.row({row.T, matrix, mb_cell(row.cells[0]), mb_cell(row.cells[1]), ratio(prev, row, 1, true), mb_cell(row.cells[2]),
                    ratio(prev, row, 2, true)});
        }

        std::cout << "\nUseful work: causal attention needs 4·d_head·T(T+1)/2 flops per head (q·k and weight·v on the\n"
                  << "allowed pairs); GFLOP/s = that / time, and its fraction of the fp32 peak above. v2's cuBLAS also\n"
                  << "computes the masked half, so it does twice the useful work. |v - CPU|: the largest difference\n"
                  << "between a version's output and the CPU's at that size; it agrees when below 1e-3, a coarse check at\n"
                  << "scale (the precise one is the comparison above). Past the CPU's rows, \"finite\": every output was\n"
                  << "written (each was NaN before its kernel ran) and none is NaN or infinite.\n";
        bool all_agree = true;
        Table ft(std::cout, {{"tokens", 8, 0}, {"v1 GFLOP/s", 12, 0}, {"% peak", 8, 1}, {"v2 GFLOP/s", 12, 0}, {"% peak", 8, 1},
                             {"v3 GFLOP/s", 12, 0}, {"% peak", 8, 1}, {"|v1 - CPU|", 11}, {"|v2 - CPU|", 11}, {"|v3 - CPU|", 11}}, "  ");
        ft.header();
        for (const Row& row : table) {
            if (row.layer_oom) continue;
            const double flops = gpu::attention_useful_flops(n_heads, row.T, d_head);
            std::vector<attn::Cell> cells = {row.T};
            for (const Measured& c : row.cells) {
                if (c.state != Measured::State::ran) {
                    cells.push_back(c.state == Measured::State::out_of_memory ? "OOM" : "-");
                    cells.push_back("-");
                    continue;
                }
                const double rate = flops / (c.ms * 1e-3);
                cells.push_back(rate / 1e9);
                cells.push_back(peak > 0 ? attn::Cell(100.0 * rate / peak) : attn::Cell("-"));
            }
            for (const Measured& c : row.cells) {
                const bool ran = c.state == Measured::State::ran;
                cells.push_back(!ran ? attn::Cell("-") : !c.finite ? attn::Cell("NaN") : c.diff_cpu >= 0 ? attn::Cell(fmt_sci(c.diff_cpu)) : attn::Cell("finite"));
                all_agree = all_agree && (!ran || (c.finite && c.diff_cpu < 1e-3));
            }
            ft.row(cells);
        }

        std::cout << (all_agree ? "  v1, v2 and v3 agree with the CPU (or are finite past it) at every size they ran\n"
                                : "  A VERSION DISAGREES WITH THE CPU OR LEFT NaN (above)\n");
        require(all_agree, "11_gpu_block", "an attention version disagrees with the CPU in the n² table (see |v - CPU|)");

        // fitted exponents over the last four rows each version ran
        std::cout << "\nfitted exponent (log-log slope, the last four rows each ran):\n";
        std::array<std::optional<double>, 3> time_exp, mem_exp;
        std::vector<std::pair<double, double>> proj_points;
        for (const Row& row : table)
            if (!row.layer_oom) proj_points.push_back({row.T, row.proj_ms});
        for (std::size_t vi = 0; vi < 3; ++vi) {
            std::vector<std::pair<double, double>> tp, mp;
            for (const Row& row : table)
                if (!row.layer_oom && row.cells[vi].state == Measured::State::ran) {
                    tp.push_back({row.T, row.cells[vi].ms});
                    mp.push_back({row.T, static_cast<double>(row.cells[vi].peak)});
                }
            time_exp[vi] = fitted_exponent(tp), mem_exp[vi] = fitted_exponent(mp);
            std::cout << "  " << names[vi] << ":  time ~ " << exponent_text(time_exp[vi]) << "   memory ~ " << exponent_text(mem_exp[vi])
                      << "\n";
        }
        const std::optional<double> proj_exp = fitted_exponent(proj_points);
        std::cout << "  projections: time ~ " << exponent_text(proj_exp) << "\n";
        int first_oom = 0;
        for (const Row& row : table)
            if (!first_oom && (row.layer_oom || row.cells[1].state == Measured::State::out_of_memory)) first_oom = row.T;
        if (first_oom)
            std::cout << "\n  At " << fmt_count(first_oom) << " tokens the scores alone are "
                      << gpu::format_bytes(gpu::attention_matrix_bytes(n_heads, first_oom)) << " (" << n_heads << " · "
                      << fmt_count(first_oom) << "² · 4 bytes): v1 and v2 run out of memory; v3 never holds a T × T matrix.\n";

        // C31: the n² wall, measured on the GPU. The materialising kernel's memory is multiplied by → 4 per
        // doubling of n (from below: the linear buffers weigh less and less), the tiled kernel's by → 2, and
        // the projections' time grows linearly. Checked at the last doubling each ran (the chapter: 3.91).
        auto last_ratio = [&](std::size_t vi) -> std::optional<double> {
            for (std::size_t r = table.size(); r-- > 1;) {
                const Row &a = table[r - 1], &b = table[r];
                if (!a.layer_oom && !b.layer_oom && a.cells[vi].state == Measured::State::ran &&
                    b.cells[vi].state == Measured::State::ran)
                    return static_cast<double>(b.cells[vi].peak) / static_cast<double>(a.cells[vi].peak);
            }
            return std::nullopt;
        };
        const std::optional<double> v2_ratio = last_ratio(1), v3_ratio = last_ratio(2);
        if (v2_ratio && v3_ratio && proj_exp) {
            const bool agrees = *v2_ratio > 3.3 && *v2_ratio < 4.5 && *v3_ratio < 2.5 && *proj_exp < 1.3;
            claims.add("C31",
                       "one layer, d = " + std::to_string(d_model) + ", " + std::to_string(n_heads) +
                           " heads, fp32: the attention matrices grow as n², everything else as n",
                       "doubling n: memory x3.91 (→ 4), fitted n^1.87, materialised; projections linear",
                       "v2 memory x" + fmt(*v2_ratio, 2) + " at the last doubling" +
                           (mem_exp[1] ? " (fitted " + exponent_text(mem_exp[1]) + ")" : std::string()) + "; v3 memory x" +
                           fmt(*v3_ratio, 2) + "; projections time ~ " + exponent_text(proj_exp),
                       agrees_if(agrees));
        } else {
            claims.skip("C31", "the table has no doubling that both v2 and v3 ran (raise --max-T)");
        }
        claims.print(std::cout);
    });
    return rc == 0 && skipped ? 77 : rc;
}
