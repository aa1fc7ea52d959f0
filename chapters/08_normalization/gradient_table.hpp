// C23's table, as 08_normalization prints it: the gradient norm per block at initialisation of the 12-block stack,
// pre-norm and post-norm, under PyTorch's default initialisation (the chapter's) and GPT-2's N(0, 0.02²), beside
// the chapter's rows; and the per-block curves drawn to an SVG.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "chapters/08_normalization/norm_placement.hpp"

namespace attn::sec08 {

// How the models are sampled: each its own batch of windows (of stack.max_T tokens) from the data.
struct InitSample {
    std::size_t batch = 16;  // windows per model
    std::uint64_t seed = 0;  // the first model's seed
    int models = 8;          // averaged per case: seeds seed … seed + models − 1
};

// Measures the four cases on `data`, prints the table and what it shows, draws the curves to svg_path; returns
// the profiles, [0] under PyTorch's initialisation and [1] under GPT-2's.
std::vector<InitGradients> print_init_gradients(std::ostream& os, const ModelSize& stack, const std::vector<int>& data,
                                                const InitSample& sample, const std::string& svg_path);

}  // namespace attn::sec08
