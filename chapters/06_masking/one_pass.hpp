// Section 9.4's proof that the causal mask hides the future (C20): one forward pass of a small model over T
// tokens, then again with the tokens after t changed, for every t; the outputs at positions ≤ t must be
// bit-identical, and the later ones must move (or the test could not fail).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>

#include "core/rng.hpp"

namespace attn::sec06 {

struct OnePass {
    bool prefix_identical = true;  // outputs ≤ t bit-identical at every t
    bool later_changed = true;     // outputs > t changed at every t
};

// The model (vocabulary 16, width 16, two heads, as common/reference/ writes it) is seeded with `seed`; the T
// tokens are drawn from `rng`. Prints a row per t: the bytes changed at ≤ t and the largest change after it.
OnePass one_pass_test(std::ostream& os, std::size_t T, std::uint64_t seed, Rng& rng);

}  // namespace attn::sec06
