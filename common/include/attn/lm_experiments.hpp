// The chapter's language-model experiments (003), each a few models trained on a corpus (attn/corpus.hpp)
// with the library's own forward/backward passes, and scored by held-out perplexity:
//
//   ladder      Section 9.1–9.5: from a no-context baseline through the uniform average, positions, the
//               residual, one learned head (replacing, then added), four heads, the FFN and LayerNorm —
//               the full block (claim C33)
//   scale       Section 9.2: one head with and without the division by √d_k at several head widths: final
//               perplexity, and the scores themselves at initialisation and after training (claim C12)
//   norm        Section 9.5: a 12-block stack, pre-norm and post-norm, with and without warmup (claim C24)
//   positions   Section 9.6: learned, sinusoidal, RoPE and ALiBi trained on one window and evaluated on 1×, 2×
//               and 4× that window (claim C29)
//   depth       Section 9.8: one block and two blocks, training against held-out perplexity (claim C37)
//
// Every experiment is a function of (corpus, size, seed) with no other state: the same seed trains the
// same weights bit for bit. The sizes are the program's: --quick (seconds, for a test), the default
// (minutes on two cores) and --full (the chapter's size where the chapter gives it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/corpus.hpp"
#include "attn/model.hpp"
#include "attn/train.hpp"

namespace attn {

enum class LmSize { quick, standard, full };

// One training run's size. Every experiment fills its own (lm_setup below) and a program may change it.
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
};

// The experiment names, in the chapter's order, and each one's setup at a size.
const std::vector<std::string>& lm_experiment_names();  // ladder, scale, norm, positions, depth
LmSetup lm_setup(const std::string& experiment, LmSize size);

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

// --- the ladder (C33) ----------------------------------------------------------------------------------
struct LadderRung {
    std::string name;
    ModelConfig config;
};
std::vector<LadderRung> ladder_rungs(std::size_t vocab, const LmSetup& setup);  // nine, each adds one piece
std::vector<LmRun> run_ladder(const Corpus& corpus, const LmSetup& setup);

// --- the √d_k ablation (C12) ---------------------------------------------------------------------------
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
std::vector<std::size_t> scale_widths(LmSize size);  // 32, 64, 128, 256; 1024 too at --full; 16 and 256 at --quick

// --- pre-norm and post-norm, with and without warmup (C24) ----------------------------------------------
// A stack of n_layers GPT-2-shaped blocks (PyTorch's default initialisation, its own output layer),
// pre-norm and post-norm, each trained without warmup and with `warmup` steps of it.
struct WarmupSetup {
    std::size_t n_layers = 12;
    int warmup = 200;
};
WarmupSetup warmup_setup(LmSize size);
struct WarmupRun {
    Norm norm = Norm::pre;
    int warmup = 0;
    LmRun run;
};
std::vector<WarmupRun> run_warmup(const Corpus& corpus, const LmSetup& setup, const WarmupSetup& warmup);

// --- positions, trained at one window and evaluated at 1×, 2×, 4× (C29) ----------------------------------
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

// --- one block against two, training against held-out (C37) --------------------------------------------
// Trained on the first `train_tokens` of the training split, so that each model sees its data many times
// over and can overfit it, as the chapter's models saw 1 MB of Shakespeare 60 times.
struct DepthRun {
    std::size_t blocks = 1;
    LmRun run;
    Evaluation train;  // on the training tokens it saw
};
std::size_t depth_train_tokens(LmSize size);
std::vector<DepthRun> run_depth(const Corpus& corpus, const LmSetup& setup, std::size_t train_tokens);

// --- training throughput of the ladder's full block (tokens/s) -------------------------------------------
// `steps` steps of the full one-block model (the ladder's last rung) on random windows, after one untimed
// step; BLAS pinned to `threads` threads.
double ladder_block_tokens_per_s(std::size_t vocab, const LmSetup& setup, int steps, int threads);

}  // namespace attn
