// Your answers to the exercises of Section 9.4. Each body is a stub that throws; replace it.
#include "06_masking/masking.hpp"

#include <cmath>

#include "core/error.hpp"

namespace ex {

Mask causal_mask(std::size_t T) {
    (void)T;
    attn::not_implemented("6.1", "causal_mask", "the (T, T) mask that lets each query read itself and the past, never the future");
}

Mask causal_padding_mask(std::size_t T, std::size_t valid) {
    (void)T, (void)valid;
    attn::not_implemented("6.2", "causal_padding_mask", "the causal mask, with the padded keys blocked as well");
}

Vec masked_softmax_row(const Vec& scores, const std::vector<bool>& keep) {
    (void)scores, (void)keep;
    attn::not_implemented("6.3", "masked_softmax_row", "the softmax over the kept positions only; an error when none is kept");
}

}  // namespace ex
