// Section 9.8 trained (claim C37): one GPT-2-shaped block against two, training against held-out perplexity.
#pragma once

#include <vector>

#include "text/corpus.hpp"
#include "train/train.hpp"

namespace attn::sec12 {

// As the chapter: both trained on the whole training split at the ladder's setup (the chapter's 3000 steps
// of batch 64 at context 128 see its 414k training tokens about 60 times). The training perplexity is
// measured on the first setup.eval_windows windows of the training split, the held-out one as everywhere.
struct DepthRun {
    std::size_t blocks = 1;
    LmRun run;
    Evaluation train;  // on training windows
};
std::vector<DepthRun> run_depth(const Corpus& corpus, const LmSetup& setup);

}  // namespace attn::sec12
