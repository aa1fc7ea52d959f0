// The claims 10_block decides (C30, C31, C35, C36): each one's statement, the chapter's figures, its criterion and
// its tolerances, in one place that the program's summary and the claim tests (tests/chapters/test_10_block.cpp)
// share.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "chapters/10_block/nsquared.hpp"
#include "core/tensor.hpp"
#include "report/claims.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec10 {

// C35's and C36's tolerances, from 10_block --no-timing --seeds 5 (seeds 0…4, 3000 steps each).
constexpr double kWellBelowHalf = 0.45;  // "well below 50 %": the uniform average's held-out accuracy lies under it
constexpr double kNearTol = 0.05;        // "≈ 90 %", "≈ 100 %": the chapter's own 92.7 % for ≈ 90 %
constexpr double kIdentical = 0.01;      // C36's "identical": two averaged rows within 0.01 in every cell

// C30: GPT-2 small's parameters, counted from a model's tensors.
struct Gpt2Count {
    std::size_t block = 0, wte = 0, wpe = 0, lnf = 0, total = 0;
    std::size_t three_biases = 0;  // b_q, b_k, b_v of one block: what dropping three of the four biases saves
};
Claim c30_claim(const Gpt2Count& count);

// C31: the n² table's fitted exponents (log-log slopes over its last four rows).
struct WallExponents {
    bool enough = false;  // four rows or more of the materialised layer
    double t_mat = 0, m_mat = 0, t_proj = 0, t_tile = 0, m_tile = 0;
};
WallExponents wall_exponents(const std::vector<WallRow>& materialised, const std::vector<WallRow>& tiled);
// C31's bounds on the fitted exponents: "linear" below kLinearBelow, "quadratic" above kQuadraticAbove (memory within
// kQuadraticAbove..4 - kQuadraticAbove, since the n x n matrices' bytes are exactly quadratic).
inline constexpr double kLinearBelow = 1.35, kQuadraticAbove = 1.5, kMemoryQuadraticAbove = 1.7;
Claim c31_claim(const WallExponents& e);
// What the n^2 table shows about tiling, in words chosen by the fitted exponents (the same bounds as C31's).
std::string tiling_sentence(const WallExponents& e);

// C35 and C36 over the pronoun task's seeds (runs[0] is --seed), each decided by claims.hpp's judge.
double lead(const Vec& row, std::size_t at);  // a position's weight less the largest other one (> 0: it leads)
void add_pronoun_claims(ClaimReport& claims, const std::vector<sec04::PronounSeed>& runs, const PronounSetup& setup);

}  // namespace attn::sec10
