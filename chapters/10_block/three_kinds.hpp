// Section 9.7's three kinds of attention, on a source of 5 tokens and a target of 3: encoder self-attention
// (unmasked), decoder self-attention (causal) and cross-attention (q from the target, k and v from the source).
#pragma once

#include <ostream>

#include "core/rng.hpp"

namespace attn::sec10 {

// Draws the two sequences from rng (stand-ins for the q = k = v projections, d_k = 4) and prints each kind's weights.
void show_three_kinds(std::ostream& os, Rng& rng);

}  // namespace attn::sec10
