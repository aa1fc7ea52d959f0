#include "chapters/10_block/nsquared.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/heads.hpp"
#include "core/memory.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "math/attention.hpp"
#include "reference/attention.hpp"
#include "reference/matmul.hpp"
#include "report/table.hpp"

namespace attn::sec10 {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

double since_ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

double attention_layer_need_mb(std::size_t n, std::size_t d_model, std::size_t n_heads, AttentionKind kind) {
    const bool tiled = kind == AttentionKind::tiled;
    const double vectors = (tiled ? 6.0 : 13.0) * static_cast<double>(n * d_model) * 4;  // (n, d_model) floats
    const double n2 = static_cast<double>(n) * static_cast<double>(n);
    const double matrices = tiled ? 0.0 : (static_cast<double>(n_heads) + 3) * n2 * 4 + n2;  // floats, and the mask's bytes
    return (vectors + matrices) / kMiB;
}

WallLayer::WallLayer(std::size_t d_model, std::size_t n_heads, Rng& rng)
    : n_heads_(n_heads),
      attention_(params_, "", AttentionConfig{.d_model = d_model, .n_heads = n_heads, .causal = true}, Init::fan_in, rng) {}

Mat WallLayer::forward(const Mat& x, AttentionKind kind) {
    const std::size_t n = x.shape(0);
    // materialised: SelfAttention's forward, each head's weights softmax(q kᵀ / √d_head + causal mask) made whole
    if (kind == AttentionKind::materialised) return attention_.forward(x, n);
    // tiled: the same products and heads, each head's attention a tile at a time (Mục 9.8)
    const Tensor3 q = split_heads(reference::matmul(x, params_["W_q"].value), 1, n, n_heads_);  // (h, n, d_head)
    const Tensor3 k = split_heads(reference::matmul(x, params_["W_k"].value), 1, n, n_heads_);
    const Tensor3 v = split_heads(reference::matmul(x, params_["W_v"].value), 1, n, n_heads_);
    Tensor3 heads = Tensor3::from_shape(v.shape());  // (h, n, d_head)
    for (std::size_t u = 0; u < n_heads_; ++u) {
        const Mat q_u = xt::view(q, u), k_u = xt::view(k, u), v_u = xt::view(v, u);
        xt::view(heads, u) = tiled_attention(q_u, k_u, v_u, true);
    }
    return reference::matmul(merge_heads(heads, 1, n, n_heads_), params_["W_o"].value);  // (n, d_model)
}

Mat WallLayer::projections(const Mat& x) {
    const Mat q = reference::matmul(x, params_["W_q"].value), k = reference::matmul(x, params_["W_k"].value);
    const Mat v = reference::matmul(x, params_["W_v"].value);
    require(q.size() + k.size() > 0, "WallLayer::projections", "no output");
    return reference::matmul(v, params_["W_o"].value);
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
    WallLayer layer(d_model, n_heads, rng);
    const Mat x = rng.normal_mat(n, d_model);  // (n, d_model): one sequence of n tokens
    // Once a process: OpenBLAS takes its buffers at its first products, which must not count in a row's peak.
    [[maybe_unused]] static const bool warmed_up = [&] { return layer.projections(rng.normal_mat(64, d_model)).size() > 0; }();
    // The first run is the one measured for memory, from a trimmed heap (measure_peak_memory), so it sees every page
    // the layer touches; it is also the timed runs' warm-up. The timed runs measure the arithmetic: the heap keeps what
    // a run frees (core/memory.hpp), so the next run reuses those pages instead of faulting fresh ones in from the
    // kernel, which can cost more than the arithmetic (docs/performance.md).
    keep_freed_memory();
    row.peak_mb = static_cast<double>(measure_peak_memory([&] { layer.forward(x, kind); }).rise()) / kMiB;
    row.ms_total = row.ms_projections = 1e300;
    for (int r = 0; r < reps; ++r) {
        auto start = std::chrono::steady_clock::now();
        const Mat out = layer.forward(x, kind);
        row.ms_total = std::min(row.ms_total, since_ms(start));
        start = std::chrono::steady_clock::now();
        const Mat o = layer.projections(x);
        row.ms_projections = std::min(row.ms_projections, since_ms(start));
        require(out.size() == n * d_model && o.size() == n * d_model, "measure_attention_layer", "no output");
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
        os << (tiled ? "\n  tiled (online softmax, tiles of 64 queries and 64 keys: no n x n matrix)\n"
                      : "  materialised (the weights of every head kept, h x n x n, each head's scores made in turn)\n");
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
