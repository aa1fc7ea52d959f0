// Section 9.5's training experiment (C24): the deep stack of norm_placement.hpp, pre-norm and post-norm,
// each trained without learning-rate warmup and with it, scored by held-out perplexity. The chapter: 12
// blocks, 1000 steps at lr 3e-3 — post-norm without warmup several times worse, with warmup level with
// pre-norm, and pre-norm needing none.
//
// 08_normalization runs it at the chapter's width and rate; 12_language_model runs it again at its own
// sizes (its `norm` experiment).
#pragma once

#include <vector>

#include "attn/corpus.hpp"
#include "attn/train.hpp"

namespace attn {

struct WarmupSetup {
    std::size_t n_layers = 12;
    int warmup = 200;  // steps of linear warmup in the runs with warmup
};

// Four runs, in this order: pre-norm without and with warmup, post-norm without and with warmup. Each
// trains norm_stack at setup's width, heads and context (setup.warmup is ignored: the runs set their own).
struct WarmupRun {
    Norm norm = Norm::pre;
    int warmup = 0;
    LmRun run;
};
std::vector<WarmupRun> run_warmup(const Corpus& corpus, const LmSetup& setup, const WarmupSetup& warmup);

}  // namespace attn
