// Section 9.4: masks. A Mask is true where a query may look (keep). Some libraries read true as
// "blocked"; the same boolean matrix then means the opposite policy, so say which one you hold.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn::sec06 {

Mask padding_mask(std::size_t T, std::size_t valid);  // (T, T) keep[t][i] = i < valid: the last T − valid are padding
Mask left_padding_mask(std::size_t T, std::size_t pad);  // (T, T) keep[t][i] = i ≥ pad: the first `pad` are padding
Mask mask_and(const Mask& a, const Mask& b);           // kept by both, e.g. causal and padding
Mask invert(const Mask& m);                            // keep ↔ blocked: the other convention

// Softmax as it is usually written — subtract the max, exponentiate, divide by the sum — with no guard:
// for a row of all −∞ the max is −∞ and −∞ − (−∞) is NaN, so every weight is NaN.
Vec naive_softmax(const Vec& s);
// What masked_softmax says of a row with every key blocked: its policy is an error, whose message this is ("" if
// it raised none).
std::string fully_masked_error();

// How a mask differs from the causal one, cell by cell: "(2, 3) leaks the next token" or
// "(1, 1) hides the current token". Empty when the mask is exactly causal.
std::vector<std::string> causal_mask_errors(const Mask& m);

// Where the padding sits in a sequence: `pad` positions, first (left padding) or last.
struct Padding {
    std::size_t pad = 0;
    bool first = false;
};
// The cells where `combined` differs from causal-and-padding by definition: key i is readable from query t when
// i ≤ t and i is a real token. 0 for mask_and(causal_mask(T), padding_mask(T, T − pad)) with the padding last.
std::size_t causal_padding_errors(const Mask& combined, Padding padding);

// The causal mask off by one, as a bug writes it: keeping i ≤ t + 1 leaks the next token, keeping i < t hides
// the current one.
enum class OffByOne { keeps_next, drops_current };
Mask off_by_one_mask(std::size_t T, OffByOne how);  // (T, T)

// A mask as rows of " 1" (may read) and " ." (blocked), each after `indent`; a line saying its size past T = 16.
void print_mask(std::ostream& os, const Mask& m, const std::string& indent = "    ");

}  // namespace attn::sec06
