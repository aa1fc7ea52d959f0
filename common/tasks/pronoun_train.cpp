#include "tasks/pronoun_train.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "train/engine.hpp"

namespace attn {

PronounScore score_pronoun(LanguageModel& model, const std::vector<std::vector<int>>& sentences,
                           const std::vector<PronounTask::Answer>& answers) {
    require(sentences.size() == answers.size() && !sentences.empty(), "score_pronoun",
            std::to_string(sentences.size()) + " sentences for " + std::to_string(answers.size()) + " answers");
    std::vector<std::size_t> rows(sentences.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::vector<int> tokens, targets;
    make_batch(sentences, rows, tokens, targets);
    const std::size_t T = sentences.front().size() - 1;
    PronounScore s;
    s.loss = model.forward(tokens, targets, sentences.size(), T);  // the mean next-token cross-entropy of the sentences
    const Mat& logits = model.logits();                             // (B·T, V)
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        const auto row = xt::row(logits, static_cast<std::ptrdiff_t>(i * T + PronounTask::kAnswerPosition));
        const int guess = static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
        const auto& a = answers[i];
        const int other = a.ref == a.x ? a.y : a.x;
        s.accuracy += guess == a.ref;
        s.wrong_noun += guess == other;
        s.elsewhere += guess != a.ref && guess != other;
    }
    const double n = static_cast<double>(sentences.size());
    s.accuracy /= n, s.wrong_noun /= n, s.elsewhere /= n;
    return s;
}

namespace {
// one sentence as a batch of one: inputs s[0 .. L−2], targets s[1 .. L−1]
void forward_one(LanguageModel& model, const std::vector<int>& sentence) {
    const std::vector<int> tokens(sentence.begin(), sentence.end() - 1), targets(sentence.begin() + 1, sentence.end());
    model.forward(tokens, targets, 1, tokens.size());
}
// row kAnswerPosition of (h, T, T) weights, averaged over the h heads → (T,)
Vec answer_row(const Tensor3& w, const std::string& where) {
    require(w.size() > 0, where, "this model has no attention");
    const std::size_t T = w.shape(1);
    Vec row = xt::zeros<float>({T});
    for (std::size_t h = 0; h < w.shape(0); ++h)
        for (std::size_t i = 0; i < T; ++i) row(i) += w(h, PronounTask::kAnswerPosition, i) / static_cast<float>(w.shape(0));
    return row;
}
}  // namespace

Vec answer_attention(reference::Model& model, const std::vector<int>& sentence, std::size_t layer) {
    require(layer < model.config().n_layers, "answer_attention",
            "block " + std::to_string(layer) + " of a " + std::to_string(model.config().n_layers) + "-block model");
    forward_one(model, sentence);
    return answer_row(model.attention_weights(layer), "answer_attention");
}

PronounRun train_pronoun(const PronounTask& task, const ModelConfig& config, const PronounSetup& setup, const std::string& name) {
    PronounRun run;
    run.name = name;
    std::unique_ptr<LanguageModel> model = make_cpu_model(config, setup.seed, setup.engine);
    run.params = model->params().count();
    PronounFit fit = fit_pronoun(*model, task, setup, name);
    run.model = as_reference_model(std::move(model), config);  // its attention maps are read on the reference engine
    run.log = std::move(fit.log);
    run.train = fit.train;
    run.heldout = fit.heldout;
    return run;
}

PronounRun train_pronoun(const PronounTask& task, Mixer mixer, std::size_t n_heads, const PronounSetup& setup,
                         const std::string& name) {
    return train_pronoun(task,
                         {.vocab = task.vocab.size(),
                          .max_T = PronounTask::kLength - 1,
                          .d_model = setup.d_model,
                          .n_heads = n_heads,
                          .mixer = mixer,
                          .d_ff = setup.d_ff,
                          .norm = setup.norm},
                         setup, name);
}

PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, const PronounSetup& setup, const std::string& name) {
    return fit_pronoun(model, task, train_config(setup, name));
}

PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, TrainConfig tc) {
    tc.eval_every = 100;  // held-out accuracy along the way: the plateau at 0.5, and the climb out of it
    tc.eval = [&] { return score_pronoun(model, task.heldout, task.heldout_answers).accuracy; };
    PronounFit fit;
    fit.log = train_lm(model, task.train, tc);
    fit.train = score_pronoun(model, task.train, task.train_answers);
    fit.heldout = score_pronoun(model, task.heldout, task.heldout_answers);
    return fit;
}

}  // namespace attn
