// Section 9.8 trained (claim C37): one GPT-2-shaped block against two, training against held-out perplexity.
#pragma once

#include <vector>

#include "attn/corpus.hpp"
#include "attn/train.hpp"

namespace attn {

// Trained on the first `train_tokens` of the training split, so that each model sees its data many times
// over and can overfit it, as the chapter's models saw 1 MB of Shakespeare 60 times.
struct DepthRun {
    std::size_t blocks = 1;
    LmRun run;
    Evaluation train;  // on the training tokens it saw
};
std::vector<DepthRun> run_depth(const Corpus& corpus, const LmSetup& setup, std::size_t train_tokens);

}  // namespace attn
