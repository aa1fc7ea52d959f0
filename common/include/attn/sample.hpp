// Text from a trained language model, one token at a time, so that a learner can read what a perplexity
// looks like. Each step runs the model on the tokens so far (the last max_T of them: the model has no
// positions beyond), takes the logits of the last position and picks the next token:
//
//   temperature > 0:  p = softmax(logits / temperature), then one uniform draw u ~ [0, 1) from rng
//                     picks the first token i whose cumulative sum p_0 + … + p_i exceeds u
//                     (1 is the model's own distribution; below 1 sharper, above 1 flatter);
//   temperature = 0:  the argmax (the limit of temperature → 0; the smallest id among equal maxima),
//                     with no draw.
//
// One draw per token, in a fixed order, so the same seed gives the same text on every platform.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/language_model.hpp"
#include "attn/rng.hpp"

namespace attn {

// Returns the n_tokens generated after `prompt` (which is not repeated). Throws attn::Error for an empty
// prompt, a negative or non-finite temperature, max_T = 0, or logits that are NaN or infinite.
std::vector<int> sample(LanguageModel& model, const std::vector<int>& prompt, std::size_t n_tokens, double temperature,
                        std::size_t max_T, Rng& rng);

}  // namespace attn
