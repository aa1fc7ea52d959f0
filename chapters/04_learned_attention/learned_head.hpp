// What 04_learned_attention's learned head looks at, and how both models learned: the head's rows at "so the"
// for two held-out sentences, its attention map, and the held-out accuracy curves.
#pragma once

#include <ostream>
#include <string>

#include "tasks/pronoun.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec04 {

// Prints the learned head's weights at "so the" for the first held-out sentence (a crosser adjective) and the one
// with the same nouns and a crossed adjective, and how far the two rows differ; draws the first sentence's map to
// svg_path.
void show_learned_head(std::ostream& os, const PronounRun& learned, const PronounTask& task, const std::string& svg_path);

// Held-out accuracy against step of the uniform average and the learned head, to svg_path's _accuracy sibling,
// whose path it returns.
std::string draw_accuracy_curves(const PronounRun& uniform, const PronounRun& learned, const std::string& svg_path);

}  // namespace attn::sec04
