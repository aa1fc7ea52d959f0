#include "chapters/12_language_model/depth.hpp"

#include <algorithm>
#include <string>

#include "fast/model.hpp"
#include "gpu/placement.hpp"

namespace attn::sec12 {

std::vector<DepthRun> run_depth(const Corpus& corpus, const LmSetup& s) {
    std::vector<DepthRun> runs;
    for (std::size_t blocks : {1u, 2u}) {
        const std::unique_ptr<LanguageModel> model = make_model(
            gpt2_config({.vocab = corpus.vocab_size(), .max_T = s.T, .d_model = s.d_model, .n_heads = s.n_heads, .n_layers = blocks}),
            s.seed, s.device, s.engine);
        DepthRun r;
        r.blocks = blocks;
        r.run = train_lm_on_corpus(*model, corpus, s, blocks == 1 ? "one block" : "two blocks", s.steps / 10);
        r.train = evaluate(*model, corpus, corpus.train, s.T, std::min<std::size_t>(s.eval_windows, 256));  // 256 training windows
        runs.push_back(std::move(r));
    }
    return runs;
}

}  // namespace attn::sec12
