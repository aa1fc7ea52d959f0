// Section 9.2 trained (claim C12): attention with and without the division by √d_k at several head widths
// — the final perplexity, and the scores themselves at initialisation and after training.
#pragma once

#include <vector>

#include "fast/model.hpp"
#include "text/corpus.hpp"
#include "train/train.hpp"

namespace attn::sec12 {

// Statistics of a head's scores (what enters the softmax: q·k/√d_k, or q·k without the division) and
// weights over the causal entries of held-out windows, pooled over heads.
struct ScoreStats {
    double score_std = 0;   // standard deviation of the allowed scores
    double entropy = 0;     // mean attention entropy per row, nats (row t has t + 1 allowed positions)
    double one_hot = 0;     // share of rows with more than 0.99 on one token (row 0, one allowed position, skipped)
};
ScoreStats score_stats(fast::Model& model, const std::vector<int>& data, std::size_t T, std::size_t windows);

struct ScaleRun {
    std::size_t d_k = 0;
    std::size_t n_heads = 1;
    bool scaled = true;
    LmRun run;
    ScoreStats init, end;   // before the first step and after the last
};
// The chapter's two settings, each trained with and without the division: (d_k, scaled), (d_k, unscaled), …
//   the small row   the ladder's several-heads rung (ladder.hpp) at the ladder's setup: d_k = d_model / h
//                   (32 at the chapter's width 128 and 4 heads; 3000 steps at --full);
//   the large rows  `scale_setup`: one head whose q and k are d_k wide (W_q, W_k: (d_model, d_k)), as in the
//                   ladder's "one head, added" rung — embeddings and positions, the residual, no W_o, no FFN
//                   and NO normalisation before the projections (the chapter's 1500 steps, batch 32).
// Without a LayerNorm, q and k start with entries of variance about 2 (embedding and position, each
// N(0, 1), through fan-in weights), so the unscaled scores start with std about 2√d_k, not √d_k.
std::vector<ScaleRun> run_scale(const Corpus& corpus, const LmSetup& ladder_setup, const LmSetup& scale_setup,
                                const std::vector<std::size_t>& large_widths);

}  // namespace attn::sec12
