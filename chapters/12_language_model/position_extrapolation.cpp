#include "chapters/12_language_model/position_extrapolation.hpp"
#include "gpu/placement.hpp"

namespace attn::sec12 {

std::vector<PositionRun> run_positions(const Corpus& corpus, const LmSetup& s) {
    std::vector<PositionRun> runs;
    for (Positions kind : {Positions::learned, Positions::sinusoidal, Positions::rope, Positions::alibi}) {
        const std::unique_ptr<LanguageModel> model =
            make_model({.vocab = corpus.vocab_size(), .max_T = 4 * s.T, .d_model = s.d_model, .n_heads = s.n_heads,
                        .d_ff = 4 * s.d_model, .norm = Norm::pre, .positions = kind},
                       s.seed, s.device, s.engine);
        PositionRun r;
        r.kind = kind;
        r.run = train_lm_on_corpus(*model, corpus, s, positions_name(kind));
        for (std::size_t m : {1u, 2u, 4u}) {
            r.lengths.push_back(m * s.T);
            // the same held-out tokens at every length: windows of 4T split into 4/m windows of mT
            r.at.push_back(evaluate(*model, corpus, corpus.heldout, m * s.T, s.eval_windows * 4 / m));
        }
        runs.push_back(std::move(r));
    }
    return runs;
}

}  // namespace attn::sec12
