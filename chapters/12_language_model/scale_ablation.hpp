// Section 9.2 trained (claim C12): one head with and without the division by √d_k at several head widths —
// the final perplexity, and the scores themselves at initialisation and after training.
#pragma once

#include <vector>

#include "attn/corpus.hpp"
#include "attn/model.hpp"
#include "attn/train.hpp"

namespace attn {

// Statistics of a head's scores (what enters the softmax: q·k/√d_k, or q·k without the division) and
// weights over the causal entries of held-out windows.
struct ScoreStats {
    double score_std = 0;   // standard deviation of the allowed scores
    double entropy = 0;     // mean attention entropy per row, nats (row t has t + 1 allowed positions)
    double one_hot = 0;     // share of rows with more than 0.99 on one token (row 0, one allowed position, skipped)
};
ScoreStats score_stats(Model& model, const std::vector<int>& data, std::size_t T, std::size_t windows);

struct ScaleRun {
    std::size_t d_k = 0;
    bool scaled = true;
    LmRun run;
    ScoreStats init, end;   // before the first step and after the last
};
// One head whose q and k are d_k wide (W_q, W_k: (d_model, d_k); the rest of the model keeps its size), a
// pre-norm LayerNorm before the projections, so that q and k start with unit-variance entries and the
// unscaled scores with std √d_k (Proposition 9.1), and no FFN (it does not change the story and costs most of
// the time). Each width trained with and without the division: (d_k, scaled), (d_k, unscaled), …
// The chapter's shorter run had no normalisation before the projections; ours without it starts saturated
// even at d_k = 32 (score std ≈ 2√d_k with embeddings and positions both N(0, 1)).
std::vector<ScaleRun> run_scale(const Corpus& corpus, const LmSetup& setup, const std::vector<std::size_t>& widths);

}  // namespace attn
