// The pronoun task as 10_block shows it for --seed: the uniform average, one block and two, their accuracies and
// losses, and the task's analogue of C37 (two blocks fit the training sentences better and the held-out ones worse),
// which is printed, not decided: C37's home is the corpus (12_language_model).
#pragma once

#include <ostream>

#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "tasks/pronoun.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec10 {

void print_pronoun_table(std::ostream& os, const sec04::PronounSeed& run, const PronounTask& task, const PronounSetup& setup);

}  // namespace attn::sec10
