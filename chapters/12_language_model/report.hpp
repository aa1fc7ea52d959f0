// What 12_language_model prints for each experiment: the chapter's table from the runs, the figures the text
// quotes, the claims each run decides (claims.hpp), and its picture. One function an experiment, each given the
// run's Context (the corpus, the size, the seeds and the flags); main.cpp chooses which run.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "chapters/12_language_model/sizes.hpp"
#include "report/claims.hpp"
#include "text/corpus.hpp"
#include "train/engine.hpp"
#include "train/train.hpp"

namespace attn::sec12 {

// One run of the program: what every experiment needs from the flags.
struct Context {
    const Corpus& corpus;
    LmSize size;
    std::uint64_t seed;
    int n_seeds;  // --seeds: the trained claims are decided over seeds seed, seed + 1, …
    int steps;  // 0: each experiment's own
    std::string svg;
    ClaimReport& claims;
    Checkpoints checkpoints;  // --save, --every, --resume
    Device device = Device::cpu;  // --device
    Engine engine = Engine::fast;  // --engine
    std::size_t eval_windows = 0;  // --eval-windows: held-out windows scored (0: the size's own)
    std::string loss_axis() const { return std::string("loss (nats per ") + corpus.unit() + ")"; }
    std::vector<std::uint64_t> seeds() const {
        std::vector<std::uint64_t> all;
        for (int i = 0; i < n_seeds; ++i) all.push_back(seed + static_cast<std::uint64_t>(i));
        return all;
    }
    LmSetup setup(const std::string& experiment) const {
        LmSetup s = lm_setup(experiment, size);
        s.seed = seed;
        if (steps > 0) s.steps = steps;
        s.checkpoints = checkpoints;
        s.device = device;
        s.engine = engine;
        if (eval_windows > 0) s.eval_windows = eval_windows;
        return s;
    }
};

void report_ladder(const Context& cx);     // Sections 9.1–9.5: the ladder (C33, and C14 inside it)
void report_scale(const Context& cx);      // Section 9.2: the √d_k ablation (C12)
void report_norm(const Context& cx);       // Section 9.5: pre-norm and post-norm, with and without warmup (C24)
void report_positions(const Context& cx);  // Section 9.6: positions past the training window (C29)
void report_depth(const Context& cx);      // Section 9.8: one block and two (C37)
void report_bench(const Context& cx, int threads);  // the full block's training throughput (not part of `all`)

// "width 128, context 128, 3000 steps of AdamW at 1e-03, batch 64, gradient clipping at 1.0": how a setup trains
// (each experiment's setup line, before how it is scored).
std::string training_line(const LmSetup& s);

// The corpus in lines: its size, its tokenizer, the split, and the size of the run.
void describe_corpus(std::ostream& os, const Corpus& corpus, LmSize size);

}  // namespace attn::sec12
