#include "chapters/04_learned_attention/category.hpp"

#include <iostream>
#include <tuple>
#include <utility>

#include "report/table.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/engine.hpp"

namespace attn::sec04 {

CategoryRun run_category(const PronounTask& category, const PronounSetup& setup, const FitTarget& target) {
    CategoryRun r{.bag_model = make_cpu_model(pronoun_block_config(category, setup, 1, Mixer::uniform), setup.seed, setup.engine),
                  .block_model = make_cpu_model(pronoun_block_config(category, setup, 1, Mixer::learned), setup.seed, setup.engine),
                  .bag = {},
                  .block = {}};
    r.bag = fit_pronoun_until(*r.bag_model, category, setup, target, "uniform (category)");
    r.block = fit_pronoun_until(*r.block_model, category, setup, target, "one block (category)");
    return r;
}

void print_category(std::ostream& os, const PronounTask& category, const FitTarget& target, const CategoryRun& run) {
    const PronounFitUntil &bag = run.bag, &block = run.block;
    os << "\nThe category version: x an animal, y a place (" << category.train.size() << " training, " << category.heldout.size()
       << " held-out sentences, 16 held-out animal/place pairs);\n  each model trains until its training accuracy reaches "
       << fmt(target.train_accuracy, 2) << " (checked every " << target.check_every << " steps, at most " << target.max_steps << ")\n";
    Table ct(os, {{"model", 18}, {"parameters", 12, 0}, {"steps", 7, 0}, {"train acc", 11, 3}, {"held-out acc", 14, 3}, {"wrong noun", 12, 3}}, "  ");
    ct.header();
    for (const auto& [name, r, m] : {std::tuple{"uniform average", &bag, run.bag_model.get()}, {"one block", &block, run.block_model.get()}})
        ct.row({name, m->params().count(), r->steps, r->fit.train.accuracy, r->fit.heldout.accuracy, r->fit.heldout.wrong_noun});
    for (const auto& [name, r] : {std::pair{"uniform average", &bag}, {"one block", &block}})
        if (!r->reached) os << "  (" << name << " did not reach the target in " << target.max_steps << " steps: it has not fit its training set)\n";
    const double bag_acc = bag.fit.heldout.accuracy, block_acc = block.fit.heldout.accuracy;
    os << "  When the answer is a category (an animal or a place), knowing which words are present is enough; the\n  bag of words "
       << (bag_acc > block_acc ? "beats" : bag_acc == block_acc ? "ties with" : "loses to") << " a block that fits its training sentences too ("
       << fmt(bag_acc, 3) << " vs " << fmt(block_acc, 3) << " held-out).\n";
}

CategorySeed category_figures(const CategoryRun& run) {
    return {.bag_fits = run.bag.reached, .block_fits = run.block.reached, .bag = run.bag.fit.heldout.accuracy, .block = run.block.fit.heldout.accuracy};
}

CategorySeed category_at_seed(const PronounSetup& setup, const FitTarget& target, std::uint64_t seed) {
    PronounSetup other = setup;
    other.seed = seed, other.progress = false;
    return category_figures(run_category(make_pronoun_task(PronounVersion::category, seed, 16), other, target));
}

}  // namespace attn::sec04
