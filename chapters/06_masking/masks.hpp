// Section 9.4: masks. A Mask is true where a query may look (keep). Some libraries read true as
// "blocked"; the same boolean matrix then means the opposite policy, so say which one you hold.
#pragma once

#include <string>
#include <vector>

#include "attn/tensor.hpp"

namespace attn::sec06 {

Mask padding_mask(std::size_t T, std::size_t valid);  // (T, T) keep[t][i] = i < valid: the last T − valid are padding
Mask left_padding_mask(std::size_t T, std::size_t pad);  // (T, T) keep[t][i] = i ≥ pad: the first `pad` are padding
Mask mask_and(const Mask& a, const Mask& b);           // kept by both, e.g. causal and padding
Mask invert(const Mask& m);                            // keep ↔ blocked: the other convention

// Softmax as it is usually written — subtract the max, exponentiate, divide by the sum — with no guard:
// for a row of all −∞ the max is −∞ and −∞ − (−∞) is NaN, so every weight is NaN.
Vec naive_softmax(const Vec& s);

// How a mask differs from the causal one, cell by cell: "(2, 3) leaks the next token" or
// "(1, 1) hides the current token". Empty when the mask is exactly causal.
std::vector<std::string> causal_mask_errors(const Mask& m);

}  // namespace attn::sec06
