// Section 9.8, the n² wall: one attention layer (d_model wide, h heads, batch one, fp32) timed and
// measured at growing n, materialised (the reference engine's SelfAttention: every head's weights, (h, n, n),
// kept for a backward) and tiled (the same layer with math/attention.hpp's tiled_attention per head: no n×n
// matrix at all).
//
// A layer is q, k, v = x W_{q,k,v}; the causal heads; out = heads W_o. "Projections" are the four
// products with W_q, W_k, W_v, W_o alone — the control: linear in n, where attention is quadratic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "reference/attention.hpp"

namespace attn::sec10 {

struct WallRow {
    std::size_t n = 0;
    double ms_total = 0;        // the whole layer, best of reps
    double ms_projections = 0;  // the four d×d products alone, best of reps
    double matrix_mb = 0;       // h · n² · 4 bytes: one n×n matrix per head (MiB)
    double peak_mb = 0;         // measured rise of resident memory during one layer forward (MiB)
    bool out_of_memory = false; // not run: its estimated need exceeds the budget
    double need_mb = 0;         // that estimate (MiB)
};

// How the layer computes attention: the whole (h, n, n) weights, or tile by tile (tiled_attention).
enum class AttentionKind { materialised, tiled };

// The layer the table runs: the reference engine's SelfAttention (Mục 9.3: causal, W_q, W_k, W_v, W_o, no biases),
// its weights drawn from rng. forward(x, materialised) is SelfAttention's forward, which keeps every head's weights,
// (h, n, n), for a backward; forward(x, tiled) runs the same products and heads with tiled_attention per head.
class WallLayer {
public:
    WallLayer(std::size_t d_model, std::size_t n_heads, Rng& rng);
    Mat forward(const Mat& x, AttentionKind kind);  // x (n, d_model) → (n, d_model)
    Mat projections(const Mat& x);                 // the four products alone: x W_q, x W_k, x W_v, then · W_o

private:
    std::size_t n_heads_;
    Parameters params_;
    reference::SelfAttention attention_;
};

// One row. `budget_mb`: rows whose estimated need exceeds it are not run (out_of_memory = true),
// as a GPU's allocator would refuse them. Deterministic inputs from `seed`.
WallRow measure_attention_layer(std::size_t n, std::size_t d_model, std::size_t n_heads, AttentionKind kind, double budget_mb,
                                int reps, std::uint64_t seed);

// What one layer forward adds to memory at its peak, in MiB, from what the code holds (x exists before it). Materialised:
// thirteen (n, d_model) matrices (q, k, v; the copy of x each projection keeps for a backward; q, k, v split into
// heads; the heads, merged, the output projection's copy of merged, and the output) besides every head's weights
// (h·n²), one head's scores, scaled scores and weights at a time (3·n²) and the causal mask (n² bytes). Tiled: six
// (q, k, v split into heads, the heads, merged, the output) and tiles of a few KiB.
double attention_layer_need_mb(std::size_t n, std::size_t d_model, std::size_t n_heads, AttentionKind kind);

// The n² table as 10_block prints it: one layer at n = min_T, 2 min_T, … max_T, materialised then tiled, each row's
// time and memory against the row before; rows past the budget are reported OUT OF MEMORY, not run.
struct WallSetup {
    std::size_t min_T = 128, max_T = 4096, d_model = 512, n_heads = 8;
    double budget_mb = 4096;
    int reps = 3;
    std::uint64_t seed = 0;
};
struct WallTables {
    std::vector<WallRow> materialised, tiled;  // the rows that ran
};
WallTables print_wall_tables(std::ostream& os, const WallSetup& s);

// Least-squares slope of log y against log x: the exponent p of y ~ x^p.
double fitted_exponent(const std::vector<double>& x, const std::vector<double>& y);

// Half of MemAvailable (/proc/meminfo) in MiB, the default budget; 4096 where it cannot be read.
double default_memory_budget_mb();

}  // namespace attn::sec10
