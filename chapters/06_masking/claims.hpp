// The claims 06_masking decides (C15–C20): each one's statement, the chapter's figures and its criterion, in one
// place that the program's summary and the claim tests (tests/chapters/test_06_masking.cpp) share. Each takes
// what the program computed and returns the claim with its verdict.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "chapters/06_masking/one_pass.hpp"
#include "core/tensor.hpp"
#include "math/attention.hpp"
#include "report/claims.hpp"

namespace attn::sec06 {

// C15: three tokens with equal scores and values (1, 4), (3, 2), (5, 0), without a mask and with the causal one.
Claim c15_claim(const AttentionSteps& open, const AttentionSteps& causal);

// The worked row: scores (0, ln 2, ln 3), values (1, 0), (0, 2), (3, 1), its third key masked before softmax.
struct MaskedRow {
    Vec weights;  // (3,)
    Vec out;      // (2,)
};
// C16: `after` is softmax(s) with the blocked weight zeroed afterwards (the wrong way), (3,).
Claim c16_claim(const Vec& after, const MaskedRow& before);
// C17: the same row with v2 = (0, 20) instead of (0, 2): the output moves, the weights do not.
Claim c17_claim(const MaskedRow& before, const MaskedRow& swapped);

// C18: a row with every key blocked.
struct FullyMaskedRow {
    Vec naive;           // (3,) softmax of (−∞, −∞, −∞) computed as usual (naive_softmax)
    Vec big_negative;    // (3,) softmax of (−1e9, −1e9, −1e9)
    std::string policy;  // the library's error for a fully masked row ("" where it raised none)
};
Claim c18_claim(const FullyMaskedRow& row);

// C19: the masks at T, each against its definition, cell by cell.
struct MaskCells {
    std::size_t T = 0;
    std::size_t causal_wrong = 0;      // causal_mask(T)'s wrong cells
    std::size_t convention_wrong = 0;  // its complement ("true = blocked") read as "true = keep"
    std::size_t combined_wrong = 0;    // causal and padding combined
    std::vector<std::string> leaks;    // causal_mask_errors of the mask keeping i ≤ t + 1
    std::vector<std::string> hides;    // … and of the mask keeping i < t
};
Claim c19_claim(const MaskCells& cells);

// C20: one pass, T predictions (one_pass.hpp).
Claim c20_claim(const OnePass& pass);

}  // namespace attn::sec06
