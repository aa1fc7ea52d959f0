// The pronoun task's attention maps at "so the" (C36): one block and two, averaged over heads and head by head, for
// two sentences that differ only in the adjective, printed and drawn (10_block's SVGs).
#pragma once

#include <ostream>
#include <string>

#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "tasks/pronoun.hpp"

namespace attn::sec10 {

// Prints the maps of run (the one- and two-block models of one seed) and writes them to svg_path and its
// _heads_tired and _heads_wet siblings.
void show_pronoun_maps(std::ostream& os, const sec04::PronounSeed& run, const PronounTask& task, const std::string& svg_path);

// The same models in the explorer page (report/explorer.hpp), at `path`: the two sentences of the maps and two held-out
// ones, each model's every head (the uniform average, one block, and each block of two), opening on "so the".
void write_pronoun_explorer(const sec04::PronounSeed& run, const PronounTask& task, const std::string& path);

}  // namespace attn::sec10
