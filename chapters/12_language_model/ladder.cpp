#include "chapters/12_language_model/ladder.hpp"

#include "chapters/12_language_model/explorer.hpp"
#include "core/error.hpp"
#include "fast/matmul.hpp"
#include "gpu/placement.hpp"
#include "text/sample.hpp"

namespace attn::sec12 {

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
    c.mixer = Mixer::learned, c.residual = false, c.output_projection = false;  // one head: its mixed v is the output
    rungs.push_back({"one head, replacing", c});
    c.residual = true;
    rungs.push_back({"one head, added", c});
    c.n_heads = s.n_heads, c.output_projection = true, c.output_bias = true;  // heads of width d / h, mixed by W_o, b_o
    rungs.push_back({std::to_string(s.n_heads) + " heads", c});
    c.d_ff = 4 * d;
    rungs.push_back({"+ FFN", c});
    c.norm = Norm::pre;
    rungs.push_back({"+ LayerNorm (full block)", c});
    return rungs;
}

std::string sample_characters(LanguageModel& model, const Corpus& corpus, const std::vector<int>& prompt, std::size_t characters,
                              double temperature, std::size_t max_T, Rng& rng) {
    std::vector<int> text = prompt;  // the prompt, then each token drawn
    std::string out;
    std::size_t have = 0;
    while (have < characters) {
        // one token at a time: sample() makes one draw per token, so this is the same text as one long call
        const int next = sample(model, text, 1, temperature, max_T, rng).front();
        text.push_back(next);
        for (const char b : corpus.pieces.at(static_cast<std::size_t>(next))) {
            const bool starts_character = (static_cast<unsigned char>(b) >> 6) != 0x2;
            if (starts_character && have == characters) break;
            have += starts_character;
            out.push_back(b);
        }
    }
    return out;
}

std::vector<LadderRun> run_ladder(const Corpus& corpus, const LmSetup& s, const SampleSetup& ss, const std::vector<std::vector<int>>& passages) {
    require(!corpus.heldout.empty(), "run_ladder", corpus.source + " has no held-out tokens to prompt with");
    std::vector<int> prompt;  // the held-out text's first tokens: at least ss.prompt_characters characters
    std::string prompt_text;
    while (prompt.size() < corpus.heldout.size() && (prompt.empty() || count_characters(prompt_text) < ss.prompt_characters)) {
        prompt.push_back(corpus.heldout[prompt.size()]);
        prompt_text += corpus.pieces.at(static_cast<std::size_t>(prompt.back()));
    }
    std::vector<LadderRun> runs;
    const std::vector<LadderRung> rungs = ladder_rungs(corpus.vocab_size(), s);
    for (std::size_t i = 0; i < rungs.size(); ++i) {
        const std::unique_ptr<LanguageModel> model = make_model(rungs[i].config, s.seed, s.device, s.engine);
        LadderRun r;
        r.run = train_lm_on_corpus(*model, corpus, s, rungs[i].name);
        Rng rng(s.seed, 0x5a0 + i);
        r.prompt = prompt_text;
        if (ss.characters > 0) r.sample = sample_characters(*model, corpus, prompt, ss.characters, ss.temperature, s.T, rng);
        if (!passages.empty() && explored(rungs[i].config)) r.view = explorer::read(*model, rungs[i].config, rungs[i].name, passages);
        runs.push_back(std::move(r));
    }
    return runs;
}

double ladder_block_tokens_per_s(std::size_t vocab, const LmSetup& s, int steps, int threads) {
    const ModelConfig full = ladder_rungs(vocab, s).back().config;
    const std::unique_ptr<LanguageModel> model = make_model(full, s.seed, s.device, s.engine, s.gpu);
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(s.batch * s.T), targets.resize(s.batch * s.T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(vocab));
        for (auto& t : targets) t = static_cast<int>(rng.below(vocab));
    };
    fast::fix_blas_threads(threads);
    TrainConfig tc;
    tc.batch = s.batch, tc.seed = s.seed, tc.progress = false;
    tc.steps = 1;
    train_loop(*model, sample, s.batch, s.T, tc);  // untimed: first-touch of every buffer
    tc.steps = steps;
    const double rate = train_loop(*model, sample, s.batch, s.T, tc).tokens_per_s;
    fast::fix_blas_threads(0);
    return rate;
}

}  // namespace attn::sec12
