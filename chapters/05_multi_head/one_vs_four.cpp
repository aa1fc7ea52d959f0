#include "chapters/05_multi_head/one_vs_four.hpp"

#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "core/side_by_side.hpp"
#include "report/svg.hpp"
#include "report/training.hpp"
#include "tasks/pronoun_train.hpp"

namespace attn::sec05 {

using sec04::pronoun_block_config;

namespace {
// One of the two models: four heads with W_o (four = true) or one head without it.
PronounRun train_heads(const PronounTask& task, const PronounSetup& setup, bool four) {
    if (four) return train_pronoun(task, pronoun_block_config(task, setup, 1, Mixer::learned, 4), setup, "four heads + W_o");
    ModelConfig one_head = pronoun_block_config(task, setup, 1, Mixer::learned, 1);
    one_head.output_projection = false;  // the merged head is the sub-layer's output
    return train_pronoun(task, one_head, setup, "one head, no W_o");
}
}  // namespace

OneVsFour train_one_vs_four(const PronounTask& task, const PronounSetup& setup) {
    OneVsFour runs;
    side_by_side(2, [&](std::size_t job) { (job == 0 ? runs.four : runs.one) = train_heads(task, setup, job == 0); });
    return runs;
}

std::vector<OneVsFour> train_one_vs_four_seeds(std::uint64_t first, std::size_t n, const PronounSetup& base) {
    std::vector<OneVsFour> runs(n);
    std::vector<PronounTask> tasks;
    for (std::size_t i = 0; i < n; ++i) tasks.push_back(make_pronoun_task(PronounVersion::role, first + i));
    // Every model of every seed a job of its own, four heads (the longer) first; side by side on the cores, the same
    // bits as one after the other (core/side_by_side.hpp).
    side_by_side(2 * n, [&](std::size_t job) {
        const std::size_t i = job % n;
        const bool four = job < n;
        PronounSetup setup = base;
        setup.seed = first + i;
        setup.progress = base.progress && i == 0;
        (four ? runs[i].four : runs[i].one) = train_heads(tasks[i], setup, four);
    });
    return runs;
}

double heldout_gap(const OneVsFour& runs) { return 100 * (runs.four.heldout.accuracy - runs.one.heldout.accuracy); }

std::string draw_one_vs_four(const OneVsFour& runs, const std::string& svg_path) {
    svg::Series s1{"one head, no W_o", {}, {}, "#d62728"}, s4{"four heads + W_o", {}, {}, "#1f77b4"};
    for (const auto& [step, acc] : runs.one.log.evals) s1.x.push_back(step), s1.y.push_back(acc);
    for (const auto& [step, acc] : runs.four.log.evals) s4.x.push_back(step), s4.y.push_back(acc);
    svg::write_file(svg_path, svg::line_plot({s1, s4}, {"Held-out accuracy on the pronoun task while training", "step", "held-out accuracy",
                                                        false, {{0.5, "chance between the two nouns"}}}));
    const std::size_t window = 50;  // the loss of one batch is noisy: plot the mean of each 50 steps
    const svg::Series loss1 = loss_curve("one head, no W_o", runs.one.log.losses, window, "#d62728");
    const svg::Series loss4 = loss_curve("four heads + W_o", runs.four.log.losses, window, "#1f77b4");
    const std::string loss_svg = svg::sibling(svg_path, "_loss");
    svg::write_file(loss_svg, svg::line_plot({loss1, loss4}, {"Training loss (all positions, mean of 50 steps)", "step", "loss"}));
    return loss_svg;
}

}  // namespace attn::sec05
