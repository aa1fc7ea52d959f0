// The ladder's blocks and post-norm (Mục 9.1, 9.5): the chapter's pieces composed otherwise than its Block.
//
// A model's config can leave out the attention (mixer = none) or learn none of it (the uniform average), drop the
// FFN (d_ff = 0), place the LayerNorm after the residual sum (post-norm) or nowhere, and drop the residual sums.
// make_block builds each such block from the same layers as the chapter's (LayerNorm, SelfAttention or
// UniformAverage, FeedForward, Residual, Sequence), one sub-layer at a time:
//   pre-norm x + f(LN(x)),  post-norm LN(x + f(x)),  no norm x + f(x);  without the residual, f(x) replaces x.
// A config that asks for none of this gets the chapter's Block itself (reference/model.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/config.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "reference/layers.hpp"

namespace attn::reference {

// What keeps config c's blocks from being the chapter's Block, e.g. "post-norm, no FFN (d_ff = 0)"; "" if nothing.
std::string not_the_chapters_block(const ModelConfig& c);

// One block of a model of config c, its parameters named prefix + …; `weights` learns how to read its
// attention weights, if it has a mixer. Each part's parameters are made before the next part's (LN_1, the mixer,
// LN_2, the FFN): the order of the fast engine's Model, so that a seed gives both engines the same weights.
std::unique_ptr<Layer> make_block(Parameters& params, const std::string& prefix, const ModelConfig& c, const AttentionConfig& a,
                                  Rng& rng, std::function<const Tensor3&()>& weights);

}  // namespace attn::reference
