#include "chapters/11_gpu_block/wall.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <string>

#include "buffer.hpp"
#include "chapters/10_block/nsquared.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "fast/multi_head.hpp"
#include "launch.hpp"
#include "ops.hpp"
#include "report/table.hpp"
#include "transformer_gpu.hpp"

namespace attn::sec11 {

using gpu::AttentionVersion;

namespace {
constexpr std::array<AttentionVersion, 3> kVersions = {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3};

double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

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
std::optional<double> last_four_exponent(const std::vector<std::pair<double, double>>& points) {
    if (points.size() < 2) return std::nullopt;
    std::vector<double> x, y;
    for (std::size_t i = points.size() > 4 ? points.size() - 4 : 0; i < points.size(); ++i)
        x.push_back(points[i].first), y.push_back(points[i].second);
    return sec10::fitted_exponent(x, y);
}
std::string exponent_text(const std::optional<double>& e) { return e ? "n^" + fmt(*e, 2) : "-"; }
}  // namespace

std::vector<Row> measure_wall(const WallSetup& setup) {
    const std::uint64_t seed = setup.seed;
    const int d_model = setup.d_model, n_heads = setup.n_heads;
    const int d_head = d_model / n_heads;
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
    for (long long n = setup.min_T; n <= setup.max_T; n *= 2) {
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
            // The fast engine's attention on the same q, k, v (the GPU's projections, copied here): what
            // every version is checked against, while it stays under about 10 s (4× per doubling of
            // T) and its (h, T, T) weights under 8 GiB of host memory.
            Mat cpu_out;
            const Row* above = table.empty() ? nullptr : &table.back();
            if ((!above || (above->cpu_ms >= 0 && above->cpu_ms * 4.5 < 10000)) && n <= 16384) {
                const std::size_t T = static_cast<std::size_t>(n), d = static_cast<std::size_t>(d_model);
                const Mat q = gpu::to_host(buf.q, T, d), k = gpu::to_host(buf.k, T, d), v = gpu::to_host(buf.v, T, d);
                fast::AttentionCache cache;
                const auto t0 = std::chrono::steady_clock::now();
                cpu_out = fast::causal_attention_forward(q, k, v, 1, T, static_cast<std::size_t>(n_heads), cache);
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

    return table;
}

WallShape print_wall(std::ostream& os, const std::vector<Row>& table, const WallSetup& setup, const gpu::DeviceInfo& info) {
    const int n_heads = setup.n_heads, d_head = setup.d_model / setup.n_heads;
    const double peak = info.fp32_peak_flops();
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

    os << "\nTime (ms; x4: the ratio to the row above, doubling n; CPU: one run, std::chrono)\n";
    Table tt(os, {{"tokens", 8, 0}, {"CPU ms", 12, 1}, {"x4", 6, 2}, {"v1 ms", 15, 3}, {"x4", 6, 2}, {"v2 ms", 15, 3},
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
        os << "\nWhy the small rows are flat: at T = " << fmt_count(T0) << " v3 launches " << v3_blocks << " blocks of "
                  << gpu::kV3Tile << " threads (v1: " << v1_blocks << " of " << gpu::kV1Threads << ") on a GPU of "
                  << info.sm_count << " SMs,\n"
                  << "each of which could run several blocks at once: most of the GPU has nothing to do, and the time is\n"
                  << "the launches' fixed cost (a few µs each) and one block's latency, not arithmetic. v3 gives every SM\n"
                  << "one block only from T = " << fmt_count(fill_T)
                  << " (h · T/64 blocks), and needs several per SM to hide memory latency;\n"
                  << "the times begin to grow as n² once the GPU is full.\n";
    }

    os << "\nMemory (MiB; attention matrix: h·T²·4 bytes, one of scores or weights; peak: the allocator's)\n";
    Table mt(os, {{"tokens", 8, 0}, {"attn matrix MB", 16, 1}, {"v1 peak MB", 15, 1}, {"v2 peak MB", 15, 1},
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

    os << "\nUseful work: causal attention needs 4·d_head·T(T+1)/2 flops per head (q·k and weight·v on the\n"
              << "allowed pairs); GFLOP/s = that / time, and its fraction of the fp32 peak above. v2's cuBLAS also\n"
              << "computes the masked half, so it does twice the useful work. |v - CPU|: the largest difference\n"
              << "between a version's output and the CPU's at that size; it agrees when below 1e-3, a coarse check at\n"
              << "scale (the precise one is the comparison above). Past the CPU's rows, \"finite\": every output was\n"
              << "written (each was NaN before its kernel ran) and none is NaN or infinite.\n";
    bool all_agree = true;
    Table ft(os, {{"tokens", 8, 0}, {"v1 GFLOP/s", 12, 0}, {"% peak", 8, 1}, {"v2 GFLOP/s", 12, 0}, {"% peak", 8, 1},
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

    os << (all_agree ? "  v1, v2 and v3 agree with the CPU (or are finite past it) at every size they ran\n"
                            : "  A VERSION DISAGREES WITH THE CPU OR LEFT NaN (above)\n");
    require(all_agree, "11_gpu_block", "an attention version disagrees with the CPU in the n² table (see |v - CPU|)");

    // fitted exponents over the last four rows each version ran
    os << "\nfitted exponent (log-log slope, the last four rows each ran):\n";
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
        time_exp[vi] = last_four_exponent(tp), mem_exp[vi] = last_four_exponent(mp);
        os << "  " << names[vi] << ":  time ~ " << exponent_text(time_exp[vi]) << "   memory ~ " << exponent_text(mem_exp[vi])
                  << "\n";
    }
    const std::optional<double> proj_exp = last_four_exponent(proj_points);
    os << "  projections: time ~ " << exponent_text(proj_exp) << "\n";
    int first_oom = 0;
    for (const Row& row : table)
        if (!first_oom && (row.layer_oom || row.cells[1].state == Measured::State::out_of_memory)) first_oom = row.T;
    if (first_oom)
        os << "\n  At " << fmt_count(first_oom) << " tokens the scores alone are "
                  << gpu::format_bytes(gpu::attention_matrix_bytes(n_heads, first_oom)) << " (" << n_heads << " · "
                  << fmt_count(first_oom) << "² · 4 bytes): v1 and v2 run out of memory; v3 never holds a T × T matrix.\n";

    // The last doubling of n each of v2 and v3 ran: its peak memory over the row above's.
    auto last_ratio = [&](std::size_t vi) -> std::optional<double> {
        for (std::size_t r = table.size(); r-- > 1;) {
            const Row &a = table[r - 1], &b = table[r];
            if (!a.layer_oom && !b.layer_oom && a.cells[vi].state == Measured::State::ran && b.cells[vi].state == Measured::State::ran)
                return static_cast<double>(b.cells[vi].peak) / static_cast<double>(a.cells[vi].peak);
        }
        return std::nullopt;
    };
    return {.v2_memory_ratio = last_ratio(1), .v3_memory_ratio = last_ratio(2), .v2_memory_exponent = mem_exp[1],
            .projections_exponent = proj_exp};

}

}  // namespace attn::sec11
