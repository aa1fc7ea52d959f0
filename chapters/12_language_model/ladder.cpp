#include "chapters/12_language_model/ladder.hpp"

#include "attn/matmul.hpp"

namespace attn {

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
