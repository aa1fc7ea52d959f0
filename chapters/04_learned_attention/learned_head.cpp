#include "chapters/04_learned_attention/learned_head.hpp"

#include <vector>

#include "core/error.hpp"
#include "math/stats.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "tasks/pronoun_train.hpp"

namespace attn::sec04 {

void show_learned_head(std::ostream& os, const PronounRun& learned, const PronounTask& task, const std::string& svg_path) {
    // The first held-out sentence (a crosser adjective) and the one with the same nouns and a crossed one.
    const auto& held = task.heldout;
    const auto& first = task.heldout_answers.front();
    std::size_t crossed = 0;
    while (crossed < held.size() && !(task.heldout_answers[crossed].x == first.x && task.heldout_answers[crossed].y == first.y &&
                                      task.heldout_answers[crossed].ref == first.y))
        ++crossed;
    require(crossed < held.size(), "04_learned_attention", "no held-out sentence pairs with the first one");
    const Vec row_crosser = answer_attention(*learned.model, held.front());
    const Vec row_crossed = answer_attention(*learned.model, held.at(crossed));
    os << "\nThe learned head at \"so the\", two held-out sentences (weights over the positions before it):\n";
    for (const auto* pair : {&held.front(), &held.at(crossed)}) {
        const Vec& w = pair == &held.front() ? row_crosser : row_crossed;
        os << "  ";
        for (std::size_t i = 0; i <= PronounTask::kAnswerPosition; ++i) os << task.vocab[(*pair)[i]] << ":" << fmt(w(i), 2) << " ";
        os << "\n";
    }
    os << "  The two rows differ by up to " << fmt(max_abs_diff(row_crosser, row_crossed), 2)
       << "; a bare T x T matrix would give both sentences one row (a difference of exactly 0).\n";
    const std::vector<int>& shown = held.front();
    std::vector<std::string> labels;
    for (std::size_t i = 0; i + 1 < shown.size(); ++i) labels.push_back(task.vocab[shown[i]]);
    answer_attention(*learned.model, shown);
    svg::write_file(svg_path, svg::heatmap(Mat(xt::view(learned.model->attention_weights(), 0)),
                                           {"One learned head, held-out: " + task.words(shown), labels, labels, false}));
}

std::string draw_accuracy_curves(const PronounRun& uniform, const PronounRun& learned, const std::string& svg_path) {
    svg::Series su{"uniform average", {}, {}, "#d62728"}, sl{"one learned head", {}, {}, "#1f77b4"};
    for (const auto& [step, acc] : uniform.log.evals) su.x.push_back(step), su.y.push_back(acc);
    for (const auto& [step, acc] : learned.log.evals) sl.x.push_back(step), sl.y.push_back(acc);
    const std::string curves = svg::sibling(svg_path, "_accuracy");
    svg::write_file(curves, svg::line_plot({su, sl}, {"Held-out accuracy, role version", "step", "held-out accuracy", false,
                                                      {{0.5, "chance between the two nouns"}}}));
    return curves;
}

}  // namespace attn::sec04
