// The training loop: sample a batch, forward, backward, AdamW step — with a progress bar (step, loss,
// tokens/s) on stderr, so what a program prints on stdout stays byte-identical for one seed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/device_settings.hpp"
#include "core/rng.hpp"
#include "text/corpus.hpp"
#include "train/engine.hpp"
#include "train/optim.hpp"

namespace attn {

struct TrainConfig {
    int steps = 1500;
    std::size_t batch = 32;   // sentences per step
    AdamWConfig opt{3e-3f};
    float clip = 1.0f;        // rescale the gradient when its global L2 norm exceeds this (0 = never)
    std::uint64_t seed = 0;   // batch sampling
    std::string label = "training";
    bool progress = true;     // the bar on stderr (only when stderr is a terminal) and a closing line
    int eval_every = 0;       // call `eval` every this many steps (0 = never), e.g. held-out accuracy
    std::function<double()> eval;
    int stop_check_every = 0;           // call `stop_when` every this many steps (0 = never); training ends
    std::function<bool()> stop_when;    // early when it returns true, e.g. once the training set is fitted
    // Checkpoints (train/checkpoint.hpp). With save_dir: a checkpoint every save_every steps (0: only at the
    // end), at the end, and on Ctrl-C, which then stops the run (attn::Interrupted). With resume_dir: the
    // weights, AdamW's state, the sampler and the loss history come from there and training goes on from the
    // step after it. `config` names the model, so that a resume into another is refused.
    std::string save_dir, resume_dir, experiment, config;
    int save_every = 0;
    std::string resume_flag_dir;  // what Ctrl-C's message tells you to pass to --resume (default: save_dir)
};

struct TrainResult {
    std::vector<double> losses;  // one per step
    bool stopped = false;        // stop_when ended training before config.steps (or at it)
    std::vector<std::pair<int, double>> evals;  // (step, eval()) every eval_every steps
    double seconds = 0, tokens_per_s = 0;
};

// The loop itself: sample(rng, tokens, targets) fills one batch of B·T tokens and targets; then
// forward, backward, clip, AdamW step; eval every eval_every steps; the progress bar.
using BatchSampler = std::function<void(Rng&, std::vector<int>&, std::vector<int>&)>;
TrainResult train_loop(LanguageModel& model, const BatchSampler& sample, std::size_t B, std::size_t T,
                       const TrainConfig& config);

// What a program's training runs do with checkpoints (train/checkpoint.hpp), from its flags:
//   --save DIR     save every trained model, each in its own folder DIR/<run>-seed<N> (and on Ctrl-C)
//   --every N      ... every N steps too, not only at the end
//   --resume DIR   go on from the checkpoints in DIR (a model without one there trains from the start), and
//                  keep saving there unless --save names another folder
struct Checkpoints {
    std::string save_dir, resume_dir;
    int every = 0;
    bool evaluate_only = false;  // --resume DIR --steps 0: load each run's checkpoint, train nothing, save nothing
    bool read_only = false;      // --resume DIR is only read (12_language_model generate): it need not be writable
};
// The folder of one run under a checkpoint folder: "+ LayerNorm (full block)", seed 0 → "layernorm-full-block-seed0".
std::string run_folder(const std::string& label, std::uint64_t seed);
// Fills tc's save_dir, resume_dir and save_every for the run labelled tc.label; with evaluate_only, its steps
// are the checkpoint's (throws attn::Error when the run has none).
void apply_checkpoints(const Checkpoints& checkpoints, TrainConfig& tc);

// The loop's settings from an experiment's setup (PronounSetup, LmSetup, …: any struct with steps, batch,
// lr, warmup, clip, seed and progress, and optionally checkpoints), labelled `label` on the progress bar.
template <class Setup>
TrainConfig train_config(const Setup& s, const std::string& label) {
    TrainConfig tc;
    tc.steps = s.steps, tc.batch = s.batch, tc.opt.lr = s.lr, tc.opt.warmup_steps = s.warmup, tc.clip = s.clip;
    tc.seed = s.seed, tc.label = label, tc.progress = s.progress;
    if constexpr (requires { s.checkpoints; }) apply_checkpoints(s.checkpoints, tc);
    return tc;
}

// Next-token training on equal-length sentences: inputs s[0 .. L−2], targets s[1 .. L−1].
TrainResult train_lm(LanguageModel& model, const std::vector<std::vector<int>>& sentences, const TrainConfig& config);

// Next-token training on random windows of T tokens from a token stream (a corpus, text/corpus.hpp).
TrainResult train_on_tokens(LanguageModel& model, const std::vector<int>& data, std::size_t T, const TrainConfig& config);

// One language model trained on a corpus and scored by held-out perplexity: the experiments of Section 9.5
// (08_normalization) and of 12_language_model. A setup is one run's size; each experiment fills its own.
struct LmSetup {
    std::size_t d_model = 64, T = 64, batch = 32;  // width, context (the training window), sequences per step
    std::size_t n_heads = 4;
    int steps = 1000;
    float lr = 1e-3f;
    int warmup = 0;              // linear learning-rate warmup, steps
    float clip = 1.0f;           // global gradient-norm clipping (0 = none)
    std::size_t eval_windows = 256;  // held-out windows of T tokens per evaluation
    std::uint64_t seed = 0;      // initialisation and batches
    bool progress = true;        // train_loop's bar on stderr
    Checkpoints checkpoints = {};  // --save, --every, --resume
    Device device = Device::cpu;   // --device: where the models train (gpu/placement.hpp)
    Engine engine = Engine::fast;  // --engine: which code trains them on the CPU (train/engine.hpp)
    GpuSettings gpu = {};          // how the GPU model runs (gpu/placement.hpp): bench_lm_train --tf32 and --graph
};

// One trained model: its name, parameters (counted from its tensors), training curve and held-out score.
struct LmRun {
    std::string name;
    std::size_t params = 0;
    TrainResult log;      // loss per step; evals: (step, held-out loss) when the experiment records them
    Evaluation heldout;   // at the training window
};

// Trains `model` on the corpus's training tokens in windows of setup.T, then evaluates it on held-out
// windows of setup.T. eval_every > 0 also records the held-out loss along the way (in log.evals).
LmRun train_lm_on_corpus(LanguageModel& model, const Corpus& corpus, const LmSetup& setup, const std::string& name,
                         int eval_every = 0);

// Inputs s[0 .. L−2] and targets s[1 .. L−1] of the sentences at `rows`, one row after another: a batch
// of rows.size() sequences of L − 1 tokens.
void make_batch(const std::vector<std::vector<int>>& sentences, const std::vector<std::size_t>& rows,
                std::vector<int>& tokens, std::vector<int>& targets);

// Rescales all gradients so that their global L2 norm is at most max_norm; returns the norm before.
double clip_grad_norm(Parameters& params, double max_norm);

// Mean of each run of `window` consecutive losses: a smoother curve to plot.
std::vector<double> smooth(const std::vector<double>& values, std::size_t window);

}  // namespace attn
