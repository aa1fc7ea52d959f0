// Section 9.2's measurements: why scores are divided by √d_k.
//   variance_table   — Prop. 9.1: q·k of iid N(0,1) entries has variance d_k (C06)
//   entropy_table    — 4,000 queries vs 64 keys, with and without the division (C09, C10)
//   saturation_table — the softmax Jacobian's trace and frozen rows over 2,000 rows (C11)
// Each width draws from its own random stream, so adding a width leaves the other rows' numbers alone.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

// The chapter's sizes: the programs' defaults, and what the claim tests run.
struct ScalingSizes {
    int pairs = 20000;   // (q, k) pairs per width, Prop. 9.1
    int queries = 4000;  // queries per width, entropy experiment
    int keys = 64;       // keys each query attends over
    int rows = 2000;     // rows of scores, saturation measure
    int max_d = 1024;    // widths 4, 16, 64, 256, 1024
};
std::vector<int> widths_up_to(int max_d);  // 4, 16, 64, … ≤ max_d

// The chapter's figures for Section 9.2 and how far a measurement may stray from them, each with its
// reason. Shared by 03_scaling's claims summary and the claim tests, so the two cannot drift apart.
namespace chapter92 {
// C06: Var(q·k)/d over `pairs` pairs has sd sqrt((2 + 6/d)/pairs) (the fourth moment of a sum of d
// products of N(0,1)); five sd.
double variance_tolerance(int d, int pairs);
inline constexpr double kMeanTolerance = 0.05;  // C06 mean 0: |mean|/sqrt(d) over 20,000 pairs has sd 0.007
// C09 at d_k = 1024, 64 keys: the figures move with the seed (a reference run gave 0.130 and 0.947).
inline constexpr double kEntropy1024 = 0.118, kEntropyTolerance = 0.05;
inline constexpr double kMaxWeight1024 = 0.953, kMaxWeightTolerance = 0.02;
inline constexpr double kScaledEntropy = 3.68, kScaledEntropyTolerance = 0.05;  // ≈ ln 64 − 1/2, every d_k
// C10: "about one token" at d_k = 256 unscaled.
inline constexpr double kAboutOneToken = 2.0;
// C11: the scaled trace, and rows frozen at d_k = 1024 unscaled ("seven in ten"; 2,000 rows: sd 0.01).
inline constexpr double kFrozenThreshold = 0.01;  // a row is frozen when every w_i (1 − w_i) is below this
inline constexpr double kTraceScaled = 0.96, kTraceTolerance = 0.01;
inline constexpr double kFrozen1024 = 0.7, kFrozenTolerance = 0.1;
}  // namespace chapter92

struct VarianceRow {
    int d;
    double mean, var, std, sqrt_d;  // measured mean and Var(q·k), its square root, and the theory's √d
};
std::vector<VarianceRow> variance_table(const std::vector<int>& widths, int pairs, std::uint64_t seed);

struct AttentionRowStats {
    double entropy;      // mean over rows, nats (max ln T_k)
    double max_weight;   // mean over rows of the largest weight
    double eff_tokens;   // mean over rows of exp(entropy): how many keys a row really averages
};
struct EntropyRow {
    int d_k;
    double score_var;  // variance of the raw scores q·k
    AttentionRowStats unscaled, scaled;
};
std::vector<EntropyRow> entropy_table(const std::vector<int>& widths, int queries, int keys, std::uint64_t seed);

struct SaturationRow {
    int d_k;
    double trace_unscaled, trace_scaled;    // mean of Σ w_i (1 − w_i) per row
    double frozen_unscaled, frozen_scaled;  // share of rows with every w_i (1 − w_i) < 0.01
};
std::vector<SaturationRow> saturation_table(const std::vector<int>& widths, int rows, int keys, std::uint64_t seed);

}  // namespace attn
