// The trained claims 12_language_model decides (C33, C14, C12, C24, C29, C37): each one's statement, the
// chapter's figures, its criterion and its reasons, in one place that the program's summary (report.cpp) and
// the claim tests (tests/chapters/test_12_language_model.cpp) share. Each takes an experiment's results at
// every seed and adds its verdict to a ClaimReport (report/claims.hpp: judged over the seeds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/08_normalization/warmup.hpp"
#include "chapters/12_language_model/depth.hpp"
#include "chapters/12_language_model/position_extrapolation.hpp"
#include "chapters/12_language_model/scale_ablation.hpp"
#include "chapters/12_language_model/sizes.hpp"
#include "report/claims.hpp"

namespace attn::sec12 {

// --- The spread a run of one seed is judged by --------------------------------------------------------------
// A run at the chapter's setup (--full) trains one seed: hours on a CPU. Its claims are judged by the spread the
// ladder shows at that setup over the seeds committed in docs/runs/ (ladder-full-cpu.txt is seed 0,
// ladder-full-cpu-seed<N>.txt the others): the sd over seeds of log(ppl_a / ppl_b) for each pair of rungs the
// ladder's claims compare, pooled over the pairs (`12_language_model --judge docs/runs` recomputes it from those
// files, and a test holds it equal to this constant). A figure of one ratio q of perplexities then lends its one value the sd
// |d figure / d log q| x kFullLogRatioSd. Figures that are not perplexity ratios (scores' std, entropy) borrow
// nothing: at one seed they decide nothing.
inline constexpr double kFullLogRatioSd = 0.012234;  // `12_language_model --judge docs/runs` measures it (judge.hpp)
inline constexpr int kFullSpreadSeeds = 3;          // the ladder's seeds at --full it was measured over (seeds 0, 1 and 2)
struct Borrowed {
    double log_ratio_sd = kNoSize;  // NaN: nothing measured at this setup
    std::string source = {};        // where it was measured, in words
};
Borrowed borrowed_spread(LmSize size);  // --full: the ladder's; the other sizes run their own seeds
Borrowed ladder_borrowed(int seeds, double log_ratio_sd);  // measured over `seeds` ladder seeds (fewer than 2: none)
// f, with the sd its one value borrows (f.values.size() == 1 and a spread measured): slope = d f / d log q there
SeedFigure lend(SeedFigure f, const Borrowed& b, double slope);

// The ladder's rungs, in the order run_ladder trains them (ladder.hpp).
struct Rung {
    enum : std::size_t { base, uniform, positions, residual, replacing, added, heads, ffn, layernorm, count };
};

// --- C33 and C14: the ladder ------------------------------------------------------------------------------
struct LadderResults {
    std::vector<std::uint64_t> seeds;
    std::vector<std::vector<double>> perplexity;  // [seed][rung]: held-out perplexity, rungs as in Rung
    std::size_t d_model = 0, n_heads = 0;
    std::size_t extra_params = 0;  // the several-heads rung's parameters less the one added head's (C14: d² + d)
    std::string setup;             // "(tiny Shakespeare, BPE, width 128, …)": the setup each claim's line names
    Borrowed spread = {};          // what one seed is judged by
};
void add_ladder_claims(ClaimReport& claims, const LadderResults& r);

// --- C12: the √d_k ablation --------------------------------------------------------------------------------
// One seed's figures: the cost of dropping the division at the small d_k and the least at the large ones, and
// how the unscaled large heads end (the first large width, 256 at --full, for std and entropy).
struct ScaleFigures {
    double c_small = 0, c_large_min = 0;  // perplexity without the division over with it, less 1
    double one_hot_min = 0;               // the least share of one-hot rows (> 0.99) among the unscaled large heads
    double std_growth = 0;                // the least (score std at the end / at init - 1) among them
    double entropy = 0;                   // the first large unscaled head's row entropy at the end
    double soft = 0;                      // half its score std less the scaled head's
    std::string costs;                    // "+38 % at 256, +45 % at 1024"
};
ScaleFigures scale_figures(const std::vector<ScaleRun>& runs);  // runs as run_scale returns them
void add_scale_claim(ClaimReport& claims, const std::vector<ScaleFigures>& per_seed, const std::vector<std::uint64_t>& seeds,
                     const std::string& setup, const Borrowed& spread = {});

// --- C24: pre-norm and post-norm, with and without warmup ----------------------------------------------------
void add_norm_claim(ClaimReport& claims, const std::vector<sec08::WarmupVerdict>& per_seed, const std::vector<std::uint64_t>& seeds,
                    const std::string& setup, std::size_t n_layers, const Borrowed& spread = {});

// --- C29: positions past the training window --------------------------------------------------------------------
// per_seed[seed][kind]: the runs of run_positions (learned, sinusoidal, RoPE, ALiBi), each at 1x, 2x, 4x
void add_positions_claim(ClaimReport& claims, const std::vector<std::vector<PositionRun>>& per_seed,
                         const std::vector<std::uint64_t>& seeds, const std::string& setup, const Borrowed& spread = {});

// --- C37: one block against two ---------------------------------------------------------------------------------
// passes: how many times the training saw each training token. Under kOverfitPasses the claim is skipped.
constexpr double kOverfitPasses = 10;
struct DepthPair {
    DepthRun one, two;  // one block, two blocks
};
void add_depth_claim(ClaimReport& claims, const std::vector<DepthPair>& per_seed, const std::vector<std::uint64_t>& seeds, double passes,
                     const std::string& setup, const Borrowed& spread = {});

std::string vs(double a, double b);  // "6.81 vs 13.44"

}  // namespace attn::sec12
