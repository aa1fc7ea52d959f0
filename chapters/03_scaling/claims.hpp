// The claims 03_scaling decides (C06–C11): each one's statement, the chapter's figures and its criterion, in one
// place that the program's summary and the claim tests (tests/chapters/test_03_scaling.cpp) share. The figures
// and tolerances themselves, with their reasons, are scaling_tables.hpp's (namespace chapter92).
#pragma once

#include <vector>

#include "chapters/03_scaling/scaling_tables.hpp"
#include "core/tensor.hpp"
#include "report/claims.hpp"

namespace attn::sec03 {

// C06: Proposition 9.1, mean 0 and Var(q·k) = d at every width of the table, measured over `pairs` pairs.
Claim c06_claim(const std::vector<VarianceRow>& rows, int pairs);

// C07: softmax(s) of the chapter's four scores, and softmax(8 s) rounded to sum 1 (round_preserving_sum).
Claim c07_claim(const Vec& p, const std::vector<double>& p8_sum1);

// C08: the largest |entry| of the softmax Jacobian at the soft row softmax(s) and at the nearly one-hot softmax(32 s).
Claim c08_claim(double max_soft, double max_one_hot);

// C09 and C10: the entropy table (4,000 queries vs `keys` keys). Each claim is about 64 keys at one width
// (C09: d_k = 1024, C10: d_k = 256); where the table lacks it, the claim is skipped.
void add_entropy_claims(ClaimReport& claims, const std::vector<EntropyRow>& rows, int keys);

// C11: the saturation table (rows of `keys` scores); about 64 keys at d_k = 1024, skipped where the table lacks it.
void add_saturation_claim(ClaimReport& claims, const std::vector<SaturationRow>& rows, int keys);

}  // namespace attn::sec03
