#include "chapters/10_block/nsquared.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "fast/flash.hpp"
#include "fast/layers.hpp"
#include "fast/multi_head.hpp"
#include "report/table.hpp"

namespace attn::sec10 {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

double since_ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

double attention_layer_need_mb(std::size_t n, std::size_t d_model, std::size_t n_heads, AttentionKind kind) {
    const double vectors = 6.0 * static_cast<double>(n * d_model) * 4;  // x, q, k, v, heads, out
    const double matrices = kind == AttentionKind::tiled ? 0.0 : 2.0 * static_cast<double>(n_heads) * static_cast<double>(n) * static_cast<double>(n) * 4;
    return (vectors + matrices) / kMiB;
}

WallRow measure_attention_layer(std::size_t n, std::size_t d_model, std::size_t n_heads, AttentionKind kind, double budget_mb,
                                int reps, std::uint64_t seed) {
    require(n > 0 && d_model > 0 && n_heads > 0 && d_model % n_heads == 0 && reps > 0, "measure_attention_layer",
            "n = " + std::to_string(n) + ", d_model = " + std::to_string(d_model) + ", n_heads = " + std::to_string(n_heads));
    WallRow row;
    row.n = n;
    row.matrix_mb = static_cast<double>(n_heads) * static_cast<double>(n) * static_cast<double>(n) * 4 / kMiB;
    row.need_mb = attention_layer_need_mb(n, d_model, n_heads, kind);
    if (row.need_mb > budget_mb) {
        row.out_of_memory = true;
        return row;
    }
    Rng rng(seed, 0x31);
    Parameters p;
    const float s = 1.0f / std::sqrt(static_cast<float>(d_model));
    Param &wq = p.normal("W_q", d_model, d_model, s, rng), &wk = p.normal("W_k", d_model, d_model, s, rng);
    Param &wv = p.normal("W_v", d_model, d_model, s, rng), &wo = p.normal("W_o", d_model, d_model, s, rng);
    const Mat x = rng.normal_mat(n, d_model);  // (n, d_model)
    auto layer = [&] {
        const Mat q = fast::linear_forward(x, wq, nullptr), k = fast::linear_forward(x, wk, nullptr), v = fast::linear_forward(x, wv, nullptr);
        Mat heads;  // (n, d_model)
        if (kind == AttentionKind::tiled) {
            heads = fast::tiled_causal_attention(q, k, v, 1, n, n_heads);
        } else {
            fast::AttentionCache cache;  // holds the weights, (h, n, n): what the backward would need
            heads = fast::causal_attention_forward(q, k, v, 1, n, n_heads, cache);
        }
        return fast::linear_forward(heads, wo, nullptr);
    };
    // Once a process: OpenBLAS takes its buffers at its first products, which must not count in a row's peak.
    [[maybe_unused]] static const bool warmed_up = [&] {
        const Mat a = rng.normal_mat(64, d_model);
        return fast::linear_forward(a, wq, nullptr).size() > 0;
    }();
    // The first run is the one measured for memory, and the timed runs' warm-up.
    row.peak_mb = static_cast<double>(measure_peak_memory([&] { layer(); }).rise()) / kMiB;
    row.ms_total = row.ms_projections = 1e300;
    for (int r = 0; r < reps; ++r) {
        auto start = std::chrono::steady_clock::now();
        const Mat out = layer();
        row.ms_total = std::min(row.ms_total, since_ms(start));
        start = std::chrono::steady_clock::now();
        const Mat q = fast::linear_forward(x, wq, nullptr), k = fast::linear_forward(x, wk, nullptr), v = fast::linear_forward(x, wv, nullptr);
        const Mat o = fast::linear_forward(v, wo, nullptr);
        row.ms_projections = std::min(row.ms_projections, since_ms(start));
        require(out.size() == n * d_model && q.size() + k.size() + o.size() > 0, "measure_attention_layer", "no output");
    }
    return row;
}

WallTables print_wall_tables(std::ostream& os, const WallSetup& s) {
    os << "One attention layer, d = " << s.d_model << ", " << s.n_heads << " heads, batch one, fp32, on this machine's CPU "
       << "(best of " << s.reps << "; memory budget " << fmt(s.budget_mb, 0) << " MiB)\n";
    WallTables t;
    for (AttentionKind kind : {AttentionKind::materialised, AttentionKind::tiled}) {
        const bool tiled = kind == AttentionKind::tiled;
        std::vector<WallRow>& rows = tiled ? t.tiled : t.materialised;
        os << (tiled ? "\n  tiled (online softmax, tile 64: no n x n matrix)\n" : "  materialised (scores and weights, h x n x n each)\n");
        Table wt(os, {{"tokens", 8, 0}, {"ms total", 11, 3}, {"ms x4", 7, 2}, {"ms projections", 16, 3}, {"attn matrix MB", 16, 1},
                      {"peak MB", 10, 1}, {"MB x4", 7, 2}}, "  ");
        wt.header();
        for (std::size_t n = s.min_T; n <= s.max_T; n *= 2) {
            const WallRow r = measure_attention_layer(n, s.d_model, s.n_heads, kind, s.budget_mb, s.reps, s.seed);
            if (r.out_of_memory) {
                wt.row({n, "OUT OF MEMORY", "", "", r.matrix_mb, "needs " + fmt(r.need_mb, 0), ""});
                continue;
            }
            const WallRow* prev = rows.empty() ? nullptr : &rows.back();
            wt.row({n, r.ms_total, prev ? Cell(r.ms_total / prev->ms_total) : Cell("-"), r.ms_projections, r.matrix_mb, r.peak_mb,
                    prev && prev->peak_mb > 0 ? Cell(r.peak_mb / prev->peak_mb) : Cell("-")});
            rows.push_back(r);
        }
    }
    return t;
}

double fitted_exponent(const std::vector<double>& x, const std::vector<double>& y) {
    require(x.size() == y.size() && x.size() >= 2, "fitted_exponent",
            std::to_string(x.size()) + " x values and " + std::to_string(y.size()) + " y values; need two or more of each");
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) mx += std::log(x[i]), my += std::log(y[i]);
    mx /= static_cast<double>(x.size()), my /= static_cast<double>(y.size());
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double dx = std::log(x[i]) - mx;
        sxy += dx * (std::log(y[i]) - my), sxx += dx * dx;
    }
    return sxy / sxx;
}

double default_memory_budget_mb() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    double kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb / 1024.0 / 2.0;
    return 4096.0;
}

}  // namespace attn::sec10
