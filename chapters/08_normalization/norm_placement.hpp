// Section 9.5, LayerNorm in the block: pre-norm (x + f(LN(x))) against post-norm (LN(x + f(x))), measured
// before any training:
//   - the structure itself (C22): with its output projections zeroed, a pre-norm block is the identity
//     — the residual path is never normalised — while a post-norm block normalises every row;
//   - the gradient norm of each block's parameters at initialisation, for a deep stack (C23).
// Training that stack with and without warmup (C24) is warmup.hpp; C22's and C23's criteria are claims.hpp's.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config.hpp"
#include "math/stats.hpp"

namespace attn::sec08 {

// The stack Section 9.5 measures and trains: GPT-2-shaped blocks placing their LayerNorms by `norm`, with
// an untied output layer and, unless told otherwise, PyTorch's default initialisation, as the chapter's
// models had (C23 also measures GPT-2's N(0, 0.02²)).
ModelConfig norm_stack(const ModelSize& size, Norm norm, Init init = Init::pytorch);

// C22: one block applied to x (B·T, d) after zeroing W_o, b_o, W_2, b_2 (both sub-layers output 0).
struct BlockStructure {
    double identity_error = 0;  // max |block(x) − x|: 0 exactly for pre-norm
    double max_row_mean = 0;    // max over rows of |mean(block(x) row)|: ~0 for post-norm
    double min_row_std = 0, max_row_std = 0;  // of block(x)'s rows: 1 for post-norm whatever x's scale
};
BlockStructure zeroed_block_structure(Norm norm, const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads,
                                      std::uint64_t seed);

// C23: per-block L2 norms of the parameter gradients after one forward/backward at initialisation,
// averaged over `seeds` models (seed, seed + 1, …), each on its own batch of windows of T tokens from data.
struct GradientProfile {
    std::vector<double> per_block;  // block 1 … n_layers, mean over the models
    double ratio = 0;               // last / first of those means
    Spread model_ratio;             // each model's own last / first, over the models: its seed-to-seed spread
};
GradientProfile init_gradient_profile(const ModelConfig& config, const std::vector<int>& data, std::size_t batch,
                                      std::size_t T, std::uint64_t seed, int seeds);

// C23's measurement under two initialisations (its chapter figures and criterion: claims.hpp).
struct InitGradients {
    GradientProfile pre, post;
};

}  // namespace attn::sec08
