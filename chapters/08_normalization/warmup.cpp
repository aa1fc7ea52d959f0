#include "chapters/08_normalization/warmup.hpp"

#include <string>

#include "chapters/08_normalization/norm_placement.hpp"

namespace attn {

std::vector<WarmupRun> run_warmup(const Corpus& corpus, const LmSetup& s, const WarmupSetup& ws) {
    std::vector<WarmupRun> runs;
    for (Norm norm : {Norm::pre, Norm::post})
        for (int warmup : {0, ws.warmup}) {
            Model model(norm_stack({.vocab = corpus.vocab_size(), .max_T = s.T, .d_model = s.d_model, .n_heads = s.n_heads,
                                    .n_layers = ws.n_layers},
                                   norm),
                        s.seed);
            LmSetup with = s;
            with.warmup = warmup;
            const std::string name = std::string(norm == Norm::pre ? "pre-norm" : "post-norm") +
                                     (warmup > 0 ? ", " + std::to_string(warmup) + "-step warmup" : ", no warmup");
            runs.push_back({norm, warmup, train_lm_on_corpus(model, corpus, with, name)});
        }
    return runs;
}

}  // namespace attn
