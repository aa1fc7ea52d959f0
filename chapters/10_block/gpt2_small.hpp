// C30's figures: GPT-2 small (d = 768, 12 blocks, vocabulary 50,257, context 1,024, output tied), counted from the
// tensors of a model built in memory, and the table 10_block prints of them.
#pragma once

#include <ostream>

#include "chapters/10_block/claims.hpp"

namespace attn::sec10 {

// Builds the model and counts its tensors: 124 M parameters, fp32, with their gradients, allocated at their shapes
// and never written (reference::Weights::shapes_only), so that the count costs neither the normal draws nor 1 GB
// of pages.
Gpt2Count count_gpt2_small();

// The count, part by part, with 12 d² + 13 d beside it and the token table's share of the whole.
void print_gpt2_count(std::ostream& os, const Gpt2Count& count);

}  // namespace attn::sec10
