#include "chapters/12_language_model/scale_ablation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "chapters/12_language_model/ladder.hpp"
#include "core/error.hpp"
#include "fast/matmul.hpp"
#include "fast/multi_head.hpp"
#include "gpu/placement.hpp"
#include "math/stats.hpp"

namespace attn::sec12 {

ScoreStats score_stats(fast::Model& model, const std::vector<int>& data, std::size_t T, std::size_t windows) {
    require(model.config().mixer == Mixer::learned, "score_stats", "the model has no learned scores");
    require(data.size() > windows * T, "score_stats",
            std::to_string(data.size()) + " tokens hold fewer than " + std::to_string(windows) + " windows of T = " + std::to_string(T));
    std::vector<int> tokens(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(windows * T));
    std::vector<int> targets(data.begin() + 1, data.begin() + 1 + static_cast<std::ptrdiff_t>(windows * T));
    model.forward(tokens, targets, windows, T);
    const fast::AttentionCache& att = model.attention_cache();
    const std::size_t h = model.config().n_heads;
    const Tensor3 scores = fast::bmm_nt(split_heads(att.q, windows, T, h), split_heads(att.k, windows, T, h));  // (B·h, T, T), before the scale
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

namespace {
// The trained weights into a model of the same configuration, tensor by tensor (the names and shapes checked)
void copy_weights(const Parameters& from, Parameters& to) {
    require(from.all().size() == to.all().size(), "copy_weights",
            std::to_string(from.all().size()) + " parameters into a model of " + std::to_string(to.all().size()));
    for (std::size_t i = 0; i < from.all().size(); ++i) {
        const Param& a = from.all()[i];
        Param& b = to.all()[i];
        require(a.name == b.name && a.value.shape() == b.value.shape(), "copy_weights",
                a.name + " " + shape_str(a.value) + " into " + b.name + " " + shape_str(b.value));
        b.value = a.value;
    }
}
}  // namespace

std::vector<ScaleRun> run_scale(const Corpus& corpus, const LmSetup& ladder_setup, const LmSetup& s,
                                const std::vector<std::size_t>& large_widths) {
    std::vector<ScaleRun> runs;
    auto train = [&](ModelConfig c, const LmSetup& setup, bool scaled) {
        c.scale = scaled;
        const std::size_t d_k = c.d_k > 0 ? c.d_k : c.d_model / c.n_heads;
        fast::Model model(c, setup.seed);  // reads the scores; on the GPU, the trained weights' copy
        ScaleRun r;
        r.d_k = d_k, r.n_heads = c.n_heads, r.scaled = scaled;
        const std::size_t stat_windows = std::min<std::size_t>(16, setup.eval_windows);
        r.init = score_stats(model, corpus.heldout, setup.T, stat_windows);
        const std::string name = "d_k " + std::to_string(d_k) + (c.n_heads > 1 ? " (" + std::to_string(c.n_heads) + " heads)" : "") +
                                 (scaled ? ", / sqrt(d_k)" : ", unscaled");
        if (setup.device == Device::cpu) {
            r.run = train_lm_on_corpus(model, corpus, setup, name);
        } else {  // the same model from the same seed, trained on the GPU; train_loop leaves its weights on the host
            const std::unique_ptr<LanguageModel> trained = make_model(c, setup.seed, setup.device, setup.engine, setup.gpu);
            r.run = train_lm_on_corpus(*trained, corpus, setup, name);
            copy_weights(trained->params(), model.params());
        }
        r.end = score_stats(model, corpus.heldout, setup.T, stat_windows);
        runs.push_back(std::move(r));
    };
    const std::vector<LadderRung> rungs = ladder_rungs(corpus.vocab_size(), ladder_setup);
    const ModelConfig heads = rungs[6].config, one_head = rungs[5].config;  // "4 heads", "one head, added"
    for (bool scaled : {true, false}) train(heads, ladder_setup, scaled);
    for (std::size_t dk : large_widths)
        for (bool scaled : {true, false}) {
            ModelConfig c = one_head;
            c.max_T = s.T, c.d_model = s.d_model, c.d_k = dk;
            train(c, s, scaled);
        }
    return runs;
}

}  // namespace attn::sec12
