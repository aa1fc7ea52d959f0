#include "attn/lm_experiments.hpp"

#include <cmath>

#include "attn/error.hpp"
#include "attn/matmul.hpp"
#include "attn/stats.hpp"

namespace attn {

const std::vector<std::string>& lm_experiment_names() {
    static const std::vector<std::string> names = {"ladder", "scale", "norm", "positions", "depth"};
    return names;
}

LmSetup lm_setup(const std::string& experiment, LmSize size) {
    LmSetup s;
    const bool quick = size == LmSize::quick, full = size == LmSize::full;
    if (experiment == "ladder" || experiment == "positions" || experiment == "depth") {
        // the chapter: width 128, context 128, 3000 steps of AdamW at 1e-3, batch 64. The default is a quarter
        // of the width and half the context; --quick trains a tiny model faster (a larger learning rate).
        s.d_model = quick ? 32 : full ? 128 : 64;
        s.T = quick ? 32 : full ? 128 : 64;
        s.batch = quick ? 16 : full ? 64 : 32;
        s.steps = quick ? 400 : full ? 3000 : 1000;
        s.lr = quick ? 2e-3f : 1e-3f;
        if (experiment == "depth" && quick) {
            // Overfitting takes a model with room to memorise: width 64 and 500 steps, or one block and two
            // fit about the same (measured: two blocks fit better and generalise worse for 5 seeds of 6 here)
            s.d_model = 64, s.batch = 32, s.steps = 500;
        }
        if (experiment == "positions") {
            s.T = quick ? 32 : 64;  // the chapter trains positions on 64-token windows
            if (quick) s.steps = 600, s.lr = 3e-3f;  // fewer steps, or a lower rate, leave ALiBi unable to use context past its window
        }
    } else if (experiment == "scale") {
        // the chapter's shorter run: 1500 steps, batch 32, one head
        s.d_model = quick ? 32 : 64;
        s.T = quick ? 32 : 64;
        s.batch = quick ? 16 : 32;
        s.steps = quick ? 500 : 1500;
        s.lr = quick ? 2e-3f : 1e-3f;
        s.n_heads = 1;
    } else if (experiment == "norm") {
        // the chapter: 12 blocks, 1000 steps, lr 3e-3 at width 128, no clipping. Post-norm's trouble grows
        // with lr × width (Adam moves each weight by about lr a step; a unit sums width of them): the default
        // keeps the chapter's product, lr 6e-3 at width 64.
        s.d_model = quick ? 32 : full ? 128 : 64;
        s.T = quick ? 16 : 32;
        s.batch = 16;
        s.steps = quick ? 400 : 1000;
        // --quick: width 32 at lr 8e-3 (lr × width 0.26) collapses post-norm for 4 seeds of 4 (6e-3: 2 of 4)
        s.lr = full ? 3e-3f : quick ? 8e-3f : 6e-3f;
        s.clip = 0;  // clipping at 1 would hide post-norm's failure
    } else {
        throw Error("lm_setup: unknown experiment '" + experiment + "'");
    }
    s.eval_windows = 256;  // held-out windows: 8,192 tokens at --quick, 16,384 at the default
    return s;
}

LmRun train_lm_on_corpus(LanguageModel& model, const Corpus& corpus, const LmSetup& s, const std::string& name,
                         int eval_every) {
    TrainConfig tc = train_config(s, name);
    if (eval_every > 0) {
        tc.eval_every = eval_every;
        tc.eval = [&] { return evaluate(model, corpus.heldout, s.T, s.eval_windows / 4 + 1).loss; };
    }
    LmRun run;
    run.name = name;
    run.params = model.params().count();
    run.log = train_on_tokens(model, corpus.train, s.T, tc);
    run.heldout = evaluate(model, corpus.heldout, s.T, s.eval_windows);
    return run;
}

// --- the ladder ----------------------------------------------------------------------------------------

std::vector<LadderRung> ladder_rungs(std::size_t vocab, const LmSetup& s) {
    const std::size_t d = s.d_model;
    ModelConfig c{.vocab = vocab, .max_T = s.T, .d_model = d, .n_heads = 1, .mixer = Mixer::none, .positions = Positions::none};
    std::vector<LadderRung> rungs;
    rungs.push_back({"no context", c});  // the bigram baseline: each token predicts the next alone
    c.mixer = Mixer::uniform, c.residual = false;
    rungs.push_back({"uniform causal average", c});
    c.positions = Positions::learned;
    rungs.push_back({"+ learned positions", c});
    c.residual = true;
    rungs.push_back({"+ residual", c});
    c.mixer = Mixer::learned, c.residual = false;
    rungs.push_back({"one head, replacing", c});
    c.residual = true;
    rungs.push_back({"one head, added", c});
    c.n_heads = s.n_heads;
    rungs.push_back({std::to_string(s.n_heads) + " heads", c});
    c.d_ff = 4 * d;
    rungs.push_back({"+ FFN", c});
    c.norm = Norm::pre;
    rungs.push_back({"+ LayerNorm (full block)", c});
    return rungs;
}

std::vector<LmRun> run_ladder(const Corpus& corpus, const LmSetup& s) {
    std::vector<LmRun> runs;
    for (const LadderRung& rung : ladder_rungs(corpus.vocab_size(), s)) {
        Model model(rung.config, s.seed);
        runs.push_back(train_lm_on_corpus(model, corpus, s, rung.name));
    }
    return runs;
}

// --- the √d_k ablation -----------------------------------------------------------------------------------

ScoreStats score_stats(Model& model, const std::vector<int>& data, std::size_t T, std::size_t windows) {
    require(model.config().mixer == Mixer::learned, "score_stats", "the model has no learned scores");
    require(data.size() > windows * T, "score_stats",
            std::to_string(data.size()) + " tokens hold fewer than " + std::to_string(windows) + " windows of T = " + std::to_string(T));
    std::vector<int> tokens(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(windows * T));
    std::vector<int> targets(data.begin() + 1, data.begin() + 1 + static_cast<std::ptrdiff_t>(windows * T));
    model.forward(tokens, targets, windows, T);
    const AttentionCache& att = model.attention_cache();
    const Tensor3 scores = bmm_nt(att.q, att.k);  // (B·h, T, T), before the scale
    double sum = 0, sq = 0, entropy_sum = 0, one_hot = 0;
    std::size_t n = 0, rows = 0;
    for (std::size_t i = 0; i < scores.shape(0); ++i)
        for (std::size_t t = 1; t < T; ++t) {  // row 0 has one allowed position: trivially one-hot, skipped
            for (std::size_t j = 0; j <= t; ++j) {
                const double s = static_cast<double>(scores(i, t, j)) * att.scale;
                sum += s, sq += s * s, ++n;
            }
            const float* w = &att.weights(i, t, 0);
            entropy_sum += entropy(w, t + 1);
            float largest = 0;
            for (std::size_t j = 0; j <= t; ++j) largest = std::max(largest, w[j]);
            one_hot += largest > 0.99f;
            ++rows;
        }
    ScoreStats st;
    const double mean = sum / static_cast<double>(n);
    st.score_std = std::sqrt(std::max(0.0, sq / static_cast<double>(n) - mean * mean));
    st.entropy = entropy_sum / static_cast<double>(rows);
    st.one_hot = one_hot / static_cast<double>(rows);
    return st;
}

std::vector<std::size_t> scale_widths(LmSize size) {
    if (size == LmSize::quick) return {16, 256};  // 500 steps are too few for d_k = 32 to recover; 16 does
    if (size == LmSize::full) return {32, 64, 128, 256, 1024};
    return {32, 64, 128, 256};
}

std::vector<ScaleRun> run_scale(const Corpus& corpus, const LmSetup& s, const std::vector<std::size_t>& widths) {
    std::vector<ScaleRun> runs;
    const std::size_t stat_windows = std::min<std::size_t>(16, s.eval_windows);
    for (std::size_t dk : widths)
        for (bool scaled : {true, false}) {
            Model model({.vocab = corpus.vocab_size(), .max_T = s.T, .d_model = s.d_model, .n_heads = 1, .d_k = dk,
                         .norm = Norm::pre, .scale = scaled},
                        s.seed);
            ScaleRun r;
            r.d_k = dk, r.scaled = scaled;
            r.init = score_stats(model, corpus.heldout, s.T, stat_windows);
            r.run = train_lm_on_corpus(model, corpus, s, "d_k " + std::to_string(dk) + (scaled ? ", / sqrt(d_k)" : ", unscaled"));
            r.end = score_stats(model, corpus.heldout, s.T, stat_windows);
            runs.push_back(std::move(r));
        }
    return runs;
}

// --- pre-norm and post-norm --------------------------------------------------------------------------------

WarmupSetup warmup_setup(LmSize size) {
    WarmupSetup w;
    w.warmup = size == LmSize::quick ? 100 : 200;
    return w;
}

std::vector<WarmupRun> run_warmup(const Corpus& corpus, const LmSetup& s, const WarmupSetup& ws) {
    std::vector<WarmupRun> runs;
    for (Norm norm : {Norm::pre, Norm::post})
        for (int warmup : {0, ws.warmup}) {
            ModelConfig c = gpt2_config({.vocab = corpus.vocab_size(), .max_T = s.T, .d_model = s.d_model, .n_heads = s.n_heads,
                                         .n_layers = ws.n_layers});
            c.norm = norm;
            c.head = Head::untied, c.init = Init::pytorch;  // an untied head and PyTorch's initialisation, as the chapter's models had
            Model model(c, s.seed);
            LmSetup with = s;
            with.warmup = warmup;
            const std::string name = std::string(norm == Norm::pre ? "pre-norm" : "post-norm") +
                                     (warmup > 0 ? ", " + std::to_string(warmup) + "-step warmup" : ", no warmup");
            runs.push_back({norm, warmup, train_lm_on_corpus(model, corpus, with, name)});
        }
    return runs;
}

// --- positions ----------------------------------------------------------------------------------------------

std::vector<PositionRun> run_positions(const Corpus& corpus, const LmSetup& s) {
    std::vector<PositionRun> runs;
    for (Positions kind : {Positions::learned, Positions::sinusoidal, Positions::rope, Positions::alibi}) {
        Model model({.vocab = corpus.vocab_size(), .max_T = 4 * s.T, .d_model = s.d_model, .n_heads = s.n_heads,
                     .d_ff = 4 * s.d_model, .norm = Norm::pre, .positions = kind},
                    s.seed);
        PositionRun r;
        r.kind = kind;
        r.run = train_lm_on_corpus(model, corpus, s, positions_name(kind));
        for (std::size_t m : {1u, 2u, 4u}) {
            r.lengths.push_back(m * s.T);
            // the same held-out tokens at every length: windows of 4T split into 4/m windows of mT
            r.at.push_back(evaluate(model, corpus.heldout, m * s.T, s.eval_windows * 4 / m));
        }
        runs.push_back(std::move(r));
    }
    return runs;
}

// --- one block against two ------------------------------------------------------------------------------------

std::size_t depth_train_tokens(LmSize size) { return size == LmSize::quick ? 2500 : size == LmSize::full ? 50000 : 5000; }

std::vector<DepthRun> run_depth(const Corpus& corpus, const LmSetup& s, std::size_t train_tokens) {
    require(corpus.train.size() >= train_tokens, "run_depth",
            corpus.source + " has " + std::to_string(corpus.train.size()) + " training tokens; the depth experiment uses " +
                std::to_string(train_tokens));
    Corpus small = corpus;
    small.train.resize(train_tokens);
    std::vector<DepthRun> runs;
    for (std::size_t blocks : {1u, 2u}) {
        Model model(gpt2_config({.vocab = corpus.vocab_size(), .max_T = s.T, .d_model = s.d_model, .n_heads = s.n_heads, .n_layers = blocks}),
                    s.seed);
        DepthRun r;
        r.blocks = blocks;
        r.run = train_lm_on_corpus(model, small, s, blocks == 1 ? "one block" : "two blocks", s.steps / 10);
        r.train = evaluate(model, small.train, s.T, train_tokens / s.T);  // every window it trained on
        runs.push_back(std::move(r));
    }
    return runs;
}

// --- throughput ------------------------------------------------------------------------------------------------

double ladder_block_tokens_per_s(std::size_t vocab, const LmSetup& s, int steps, int threads) {
    const ModelConfig full = ladder_rungs(vocab, s).back().config;
    Model model(full, s.seed);
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(s.batch * s.T), targets.resize(s.batch * s.T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(vocab));
        for (auto& t : targets) t = static_cast<int>(rng.below(vocab));
    };
    fix_blas_threads(threads);
    TrainConfig tc;
    tc.batch = s.batch, tc.seed = s.seed, tc.progress = false;
    tc.steps = 1;
    train_loop(model, sample, s.batch, s.T, tc);  // untimed: first-touch of every buffer
    tc.steps = steps;
    const double rate = train_loop(model, sample, s.batch, s.T, tc).tokens_per_s;
    fix_blas_threads(0);
    return rate;
}

}  // namespace attn
