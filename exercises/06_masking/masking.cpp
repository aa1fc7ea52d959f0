// Your answers to the exercises of Section 9.4. Each body is a stub that throws; replace it.
#include "06_masking/masking.hpp"

#include <cmath>

#include "attn/error.hpp"

namespace ex {

Mask causal_mask(std::size_t T) {
    (void)T;
    attn::not_implemented("6.1", "causal_mask", "keep (t, i) when i <= t");
}

Mask causal_padding_mask(std::size_t T, std::size_t valid) {
    (void)T, (void)valid;
    attn::not_implemented("6.2", "causal_padding_mask", "keep (t, i) when i <= t and i < valid");
}

Vec masked_softmax_row(const Vec& scores, const std::vector<bool>& keep) {
    (void)scores, (void)keep;
    attn::not_implemented("6.3", "masked_softmax_row", "softmax over the kept positions; an error when none is kept");
}

}  // namespace ex
