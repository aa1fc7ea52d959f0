// Section 9.5's block as it runs: a small stack of GPT-2's pre-norm blocks in the reference engine (the chapter's
// Block, common/reference/model.hpp), block 1 printed tensor by tensor (name, shape, meaning), and --dump's .npy
// files of one block's input, weights and output.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/rng.hpp"

namespace attn::sec10 {

// Two blocks (d_model 64, 4 heads, vocabulary 50, seeded with `seed`) run on B = 2 sequences of T = 8 tokens drawn
// from rng; prints block 1's trace. With a dump_dir, also writes there a random input x (from its own stream of
// `seed`, so every other number printed is unchanged), the weights of block 1 and its output y.
void show_traced_block(std::ostream& os, Rng& rng, std::uint64_t seed, const std::string& dump_dir);

}  // namespace attn::sec10
