// The training loop: sample a batch, forward, backward, AdamW step — with a progress bar (step, loss,
// tokens/s) on stderr, so what a program prints on stdout stays byte-identical for one seed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attn/cli.hpp"
#include "attn/config.hpp"
#include "attn/corpus.hpp"
#include "attn/device.hpp"
#include "attn/engine.hpp"
#include "attn/optim.hpp"
#include "attn/pronoun.hpp"
#include "attn/rng.hpp"
#include "attn/svg.hpp"
#include "reference/model.hpp"

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
    // Checkpoints (attn/checkpoint.hpp). With save_dir: a checkpoint every save_every steps (0: only at the
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

// What a program's training runs do with checkpoints (attn/checkpoint.hpp), from its flags:
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
void add_checkpoint_flags(Cli& cli, Checkpoints& checkpoints);
// --engine reference|fast, its default the value `engine` holds when called (attn/engine.hpp).
void add_engine_flag(Cli& cli, Engine& engine);
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

// Next-token training on random windows of T tokens from a token stream (a corpus, attn/corpus.hpp).
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
    Device device = Device::cpu;   // --device: where the models train (attn/device.hpp)
    Engine engine = Engine::fast;  // --engine: which code trains them on the CPU (attn/engine.hpp)
    GpuSettings gpu = {};          // how the GPU model runs (attn/device.hpp): bench_lm_train --tf32 and --graph
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

// The pronoun task's score: the argmax at "so the" over the whole vocabulary.
struct PronounScore {
    double accuracy = 0;    // the right noun
    double wrong_noun = 0;  // the other noun of the pair: knows which nouns are there, not their order
    double elsewhere = 0;   // anything else
};
PronounScore score_pronoun(LanguageModel& model, const std::vector<std::vector<int>>& sentences,
                           const std::vector<PronounTask::Answer>& answers);

// Mean next-token cross-entropy over every position of the sentences (one forward, no gradients).
double mean_loss(LanguageModel& model, const std::vector<std::vector<int>>& sentences);

// The attention row at "so the" for one sentence in one block (layer 0 is the first), averaged over
// heads: (T,) weights over positions.
Vec answer_attention(reference::Model& model, const std::vector<int>& sentence, std::size_t layer = 0);

// One model trained on the pronoun task and scored: the experiment of Sections 9.1, 9.3 and 9.7.
struct PronounSetup {
    int steps = 3000;
    std::size_t batch = 32;
    std::size_t d_model = 64, d_ff = 128;  // every model has the same per-position MLP before its readout
    Norm norm = Norm::pre;                 // pre-norm LayerNorms: the same for every model, and stable training
    float lr = 1e-3f;
    int warmup = 0;                        // steps of linear learning-rate warmup
    float clip = 1.0f;                     // global gradient-norm clipping (0 = none)
    std::uint64_t seed = 0;                // initialisation and batches
    bool progress = true;
    Checkpoints checkpoints = {};          // --save, --every, --resume
    Device device = Device::cpu;           // --device: where the models train (attn/device.hpp)
    Engine engine = Engine::reference;     // --engine: the sections train on the code a learner reads (attn/engine.hpp)
};
struct PronounRun {
    std::string name;
    std::unique_ptr<reference::Model> model;  // the trained model, on the reference engine (attn/engine.hpp)
    std::size_t params = 0;
    PronounScore train, heldout;
    TrainResult log;
};
// A model of `config` (seeded with setup.seed) trained on the task with fit_pronoun, counted and scored.
PronounRun train_pronoun(const PronounTask& task, const ModelConfig& config, const PronounSetup& setup, const std::string& name);
// The same for the chapter's small pronoun model: embeddings, `mixer` with `n_heads`, setup.d_ff, setup.norm.
PronounRun train_pronoun(const PronounTask& task, Mixer mixer, std::size_t n_heads, const PronounSetup& setup,
                         const std::string& name);

// Any model on the pronoun task: trained with setup's steps, batch, lr and seed (held-out accuracy every
// 100 steps in log.evals), then scored, with the mean loss on training and held-out sentences.
struct PronounFit {
    TrainResult log;
    PronounScore train, heldout;
    double train_loss = 0, heldout_loss = 0;
};
PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, const PronounSetup& setup, const std::string& name);
// The same with the loop's settings given (e.g. a stop_when): held-out accuracy is recorded every 100 steps.
PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, TrainConfig config);

// Rescales all gradients so that their global L2 norm is at most max_norm; returns the norm before.
double clip_grad_norm(Parameters& params, double max_norm);

// Mean of each run of `window` consecutive losses: a smoother curve to plot.
std::vector<double> smooth(const std::vector<double>& values, std::size_t window);

// A training curve to plot: the mean of each run of `window` losses (one batch's loss is noisy), drawn at
// the step that ends the run — window, 2·window, …
svg::Series loss_curve(const std::string& name, const std::vector<double>& losses, std::size_t window,
                       const std::string& colour, bool dashed = false);

}  // namespace attn
