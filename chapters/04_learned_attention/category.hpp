// The category version of the pronoun task (C34): x an animal, y a place, so knowing which words are present is
// enough. A fair opponent fits its training sentences: each model trains until it answers them (FitTarget), both
// 10_block's one-block model, one with equal weights (the uniform average), one with four learned heads.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "core/language_model.hpp"
#include "tasks/pronoun.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec04 {

struct CategoryRun {
    std::unique_ptr<LanguageModel> bag_model, block_model;  // the uniform average and one block, on setup.engine
    PronounFitUntil bag, block;
};
// Both models seeded with setup.seed, each trained on `category` until it fits (or target.max_steps).
CategoryRun run_category(const PronounTask& category, const PronounSetup& setup, const FitTarget& target);

// The run as a table (parameters, steps, train and held-out accuracy), a line for a model that did not fit, and
// which of the two wins.
void print_category(std::ostream& os, const PronounTask& category, const FitTarget& target, const CategoryRun& run);

// What C34 reads of one seed's run.
struct CategorySeed {
    bool bag_fits = false, block_fits = false;  // reached the target
    double bag = 0, block = 0;                  // held-out accuracy
};
CategorySeed category_figures(const CategoryRun& run);

// The same at another seed, its own task, without progress bars (04_learned_attention trains the other seeds side by
// side with --seed's).
CategorySeed category_at_seed(const PronounSetup& setup, const FitTarget& target, std::uint64_t seed);

}  // namespace attn::sec04
