// Sections 9.1–9.5 as one ladder (claim C33): nine models, each adding one piece to the one before — a
// no-context baseline, the uniform causal average, learned positions, the residual, one learned head
// (replacing, then added), several heads, the FFN and LayerNorm: the full block.
#pragma once

#include <string>
#include <vector>

#include "attn/corpus.hpp"
#include "attn/model.hpp"
#include "attn/train.hpp"

namespace attn {

struct LadderRung {
    std::string name;
    ModelConfig config;
};
std::vector<LadderRung> ladder_rungs(std::size_t vocab, const LmSetup& setup);  // nine, each adds one piece
std::vector<LmRun> run_ladder(const Corpus& corpus, const LmSetup& setup);

// Training throughput of the ladder's full block (tokens/s): `steps` steps of the last rung on random
// windows, after one untimed step; BLAS pinned to `threads` threads.
double ladder_block_tokens_per_s(std::size_t vocab, const LmSetup& setup, int steps, int threads);

}  // namespace attn
