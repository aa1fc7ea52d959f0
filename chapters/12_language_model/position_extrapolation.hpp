// Section 9.6 trained (claim C29): learned, sinusoidal, RoPE and ALiBi positions, each in the ladder's full
// block, trained on one window and evaluated on 1×, 2× and 4× that window.
#pragma once

#include <vector>

#include "fast/model.hpp"
#include "text/corpus.hpp"
#include "train/train.hpp"

namespace attn::sec12 {

// The learned table has 4 × window rows, so that it can be evaluated at 4× at all: the rows past the
// training window never receive a gradient and stay as initialised (shrunk a little by weight decay) —
// the chapter's "position 100 never appeared in a batch and its embedding is still the random vector".
struct PositionRun {
    Positions kind = Positions::learned;
    LmRun run;
    std::vector<std::size_t> lengths;      // window, 2 window, 4 window
    std::vector<Evaluation> at;            // held-out at each length
};
std::vector<PositionRun> run_positions(const Corpus& corpus, const LmSetup& setup);

}  // namespace attn::sec12
