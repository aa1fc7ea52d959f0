// Sections 9.1–9.5 as one ladder (claims C33 and C14): nine models, each adding one piece to the one
// before — a no-context baseline, the uniform causal average, learned positions, the residual, one learned
// head (replacing, then added), several heads, the FFN and LayerNorm: the full block.
//
// As in the chapter, the one-head rungs have no W_o: the head's output (its v, mixed) is the attention's
// output. The "4 heads" rung splits the width into heads and mixes them with W_o and its bias b_o — the
// chapter's nn.Linear(d, d), d² + d more parameters (16,512 at d = 128): C14's price of several heads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fast/model.hpp"
#include "report/explorer.hpp"
#include "text/corpus.hpp"
#include "train/train.hpp"

namespace attn::sec12 {

struct LadderRung {
    std::string name;
    ModelConfig config;
};
std::vector<LadderRung> ladder_rungs(std::size_t vocab, const LmSetup& setup);  // nine, each adds one piece

// What each trained rung reads like: `characters` characters generated at temperature 1 after a prompt,
// the held-out text's first tokens (at least prompt_characters characters of it).
struct SampleSetup {
    std::size_t characters = 200;
    std::size_t prompt_characters = 16;
    double temperature = 1.0;
};
struct LadderRun {
    LmRun run;
    std::string prompt, sample;  // raw bytes (text/sample.hpp's printable() before printing)
    std::optional<explorer::ModelView> view;  // how it reads the passages, where the explorer page shows the rung
};
// Each rung trained from seed; its sample drawn from Rng(seed, 0x5a0 + rung): the same seed, the same text. With
// passages (explorer.hpp), each rung the explorer page shows reads them once trained.
std::vector<LadderRun> run_ladder(const Corpus& corpus, const LmSetup& setup, const SampleSetup& samples = {},
                                  const std::vector<std::vector<int>>& passages = {});

// `characters` characters (UTF-8 code points; the last token's bytes cut where the count is reached) that
// `model` writes after `prompt`, one token at a time (text/sample.hpp).
std::string sample_characters(LanguageModel& model, const Corpus& corpus, const std::vector<int>& prompt, std::size_t characters,
                              double temperature, std::size_t max_T, Rng& rng);

// Training throughput of the ladder's full block (tokens/s): `steps` steps of the last rung on random
// windows, after one untimed step; BLAS pinned to `threads` threads.
double ladder_block_tokens_per_s(std::size_t vocab, const LmSetup& setup, int steps, int threads);

}  // namespace attn::sec12
