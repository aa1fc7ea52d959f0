#include "chapters/03_scaling/scaling_tables.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor-blas/xlinalg.hpp>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"

namespace attn::sec03 {

namespace {
enum Stream : std::uint64_t { kVariance = 1, kEntropy = 2, kSaturation = 3 };
Rng stream_for(std::uint64_t seed, Stream s, int d) { return Rng(seed, (std::uint64_t{s} << 32) | static_cast<std::uint32_t>(d)); }

void require_positive(const std::vector<int>& widths, int n, const char* where, const char* what) {
    require(!widths.empty(), where, "no widths given");
    for (int d : widths) require(d > 0, where, "width " + std::to_string(d) + " must be positive");
    require(n > 0, where, std::string(what) + " must be positive, got " + std::to_string(n));
}

AttentionRowStats row_stats(const Mat& w) {  // w: (rows, T_k)
    AttentionRowStats s{0, 0, 0};
    const std::size_t rows = w.shape(0), n = w.shape(1);
    for (std::size_t i = 0; i < rows; ++i) {
        const float* r = w.data() + i * n;
        const double h = entropy(r, n);
        s.entropy += h;
        s.eff_tokens += effective_tokens(h);
        s.max_weight += *std::max_element(r, r + n);
    }
    s.entropy /= static_cast<double>(rows);
    s.eff_tokens /= static_cast<double>(rows);
    s.max_weight /= static_cast<double>(rows);
    return s;
}
}  // namespace

std::vector<int> widths_up_to(int max_d) {
    std::vector<int> widths;
    for (int d = 4; d <= max_d; d *= 4) widths.push_back(d);
    return widths;
}

double chapter92::variance_tolerance(int d, int pairs) { return 5.0 * std::sqrt((2.0 + 6.0 / d) / pairs); }
double chapter92::mean_tolerance(int pairs) { return 5.0 / std::sqrt(static_cast<double>(pairs)); }

double chapter92::PerWidth::at(int d_k) const {
    require(d_k >= 4, "chapter92::PerWidth", "widths start at 4, got " + std::to_string(d_k));
    std::size_t i = 0;
    for (int d = 4; d < d_k && i < 4; d *= 4) ++i;
    return sd[i];
}

std::vector<VarianceRow> variance_table(const std::vector<int>& widths, int pairs, std::uint64_t seed) {
    require_positive(widths, pairs, "variance_table", "pairs");
    std::vector<VarianceRow> table;
    for (int d : widths) {
        Rng rng = stream_for(seed, kVariance, d);
        Vec dots = Vec::from_shape({static_cast<std::size_t>(pairs)});  // (pairs,)
        Vec q = Vec::from_shape({static_cast<std::size_t>(d)}), k = q;
        for (int p = 0; p < pairs; ++p) {
            rng.fill_normal(q.data(), q.size());
            rng.fill_normal(k.data(), k.size());
            double dot = 0;
            for (int j = 0; j < d; ++j) dot += static_cast<double>(q(j)) * k(j);
            dots(p) = static_cast<float>(dot);
        }
        const double var = variance_of(dots);
        table.push_back({d, mean_of(dots), var, std::sqrt(var), std::sqrt(static_cast<double>(d))});
    }
    return table;
}

std::vector<EntropyRow> entropy_table(const std::vector<int>& widths, int queries, int keys, std::uint64_t seed) {
    require_positive(widths, queries, "entropy_table", "queries");
    require(keys > 0, "entropy_table", "keys must be positive, got " + std::to_string(keys));
    std::vector<EntropyRow> table;
    for (int d : widths) {
        Rng rng = stream_for(seed, kEntropy, d);
        const Mat q = rng.normal_mat(static_cast<std::size_t>(queries), static_cast<std::size_t>(d));  // (queries, d_k)
        const Mat k = rng.normal_mat(static_cast<std::size_t>(keys), static_cast<std::size_t>(d));     // (keys, d_k)
        const Mat scores = xt::linalg::dot(q, xt::transpose(k));                                       // (queries, keys)
        const Mat scaled = scores / std::sqrt(static_cast<float>(d));
        EntropyRow row;
        row.d_k = d;
        row.score_var = variance_of(scores.data(), scores.size());
        row.unscaled = row_stats(softmax_rows(scores));
        row.scaled = row_stats(softmax_rows(scaled));
        table.push_back(row);
    }
    return table;
}

std::vector<SaturationRow> saturation_table(const std::vector<int>& widths, int rows, int keys, std::uint64_t seed) {
    require_positive(widths, rows, "saturation_table", "rows");
    require(keys > 0, "saturation_table", "keys must be positive, got " + std::to_string(keys));
    std::vector<SaturationRow> table;
    for (int d : widths) {
        Rng rng = stream_for(seed, kSaturation, d);
        const Mat q = rng.normal_mat(static_cast<std::size_t>(rows), static_cast<std::size_t>(d));  // (rows, d_k)
        const Mat k = rng.normal_mat(static_cast<std::size_t>(keys), static_cast<std::size_t>(d));  // (keys, d_k)
        const Mat scores = xt::linalg::dot(q, xt::transpose(k));                                    // (rows, keys)
        const Mat w_unscaled = softmax_rows(scores);
        const Mat w_scaled = softmax_rows(scores / std::sqrt(static_cast<float>(d)));
        SaturationRow row{d, 0, 0, 0, 0};
        const std::size_t n = static_cast<std::size_t>(keys);
        for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) {
            row.trace_unscaled += jacobian_trace(w_unscaled.data() + i * n, n);
            row.trace_scaled += jacobian_trace(w_scaled.data() + i * n, n);
            row.frozen_unscaled += is_frozen(w_unscaled.data() + i * n, n, chapter92::kFrozenThreshold);
            row.frozen_scaled += is_frozen(w_scaled.data() + i * n, n, chapter92::kFrozenThreshold);
        }
        row.trace_unscaled /= rows;
        row.trace_scaled /= rows;
        row.frozen_unscaled /= rows;
        row.frozen_scaled /= rows;
        table.push_back(row);
    }
    return table;
}

std::vector<SweepFigure> seed_sweep(const ScalingSizes& n, std::uint64_t first_seed, int seeds) {
    require(seeds > 0, "seed_sweep", "seeds must be positive, got " + std::to_string(seeds));
    const std::vector<int> widths = widths_up_to(n.max_d);
    // values[figure] over the seeds, figures in the order they are first met
    std::vector<std::pair<std::string, std::string>> names;
    std::vector<std::vector<double>> values;
    auto put = [&](std::size_t& i, const std::string& claim, const std::string& figure, double v) {
        if (i == names.size()) names.push_back({claim, figure}), values.emplace_back();
        values[i++].push_back(v);
    };
    for (int s = 0; s < seeds; ++s) {
        const std::uint64_t seed = first_seed + static_cast<std::uint64_t>(s);
        std::size_t i = 0;
        for (const auto& r : variance_table(widths, n.pairs, seed)) {
            put(i, "C06", "Var(q.k)/d, d = " + std::to_string(r.d), r.var / r.d);
            put(i, "C06", "|mean(q.k)|/sqrt(d), d = " + std::to_string(r.d), std::fabs(r.mean) / r.sqrt_d);
        }
        for (const auto& r : entropy_table(widths, n.queries, n.keys, seed)) {
            const std::string at = ", d_k = " + std::to_string(r.d_k);
            put(i, "C09", "score variance / d_k" + at, r.score_var / r.d_k);
            put(i, "C09", "scaled entropy" + at, r.scaled.entropy);
            put(i, "C09", "unscaled entropy" + at, r.unscaled.entropy);
            put(i, "C09", "unscaled max weight" + at, r.unscaled.max_weight);
            put(i, "C10", "unscaled effective tokens" + at, r.unscaled.eff_tokens);
        }
        for (const auto& r : saturation_table(widths, n.rows, n.keys, seed)) {
            const std::string at = ", d_k = " + std::to_string(r.d_k);
            put(i, "C11", "scaled trace" + at, r.trace_scaled);
            put(i, "C11", "unscaled frozen share" + at, r.frozen_unscaled);
            put(i, "C11", "scaled frozen share" + at, r.frozen_scaled);
        }
    }
    std::vector<SweepFigure> out;
    for (std::size_t i = 0; i < names.size(); ++i) out.push_back({names[i].first, names[i].second, spread_of(values[i])});
    return out;
}

}  // namespace attn::sec03
