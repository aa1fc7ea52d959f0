// The claims 05_multi_head decides (C13, C14): each one's statement, the chapter's figures, its criterion and its
// tolerances, in one place that the program's summary and the claim tests (tests/chapters/test_05_multi_head.cpp)
// share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "report/claims.hpp"

namespace attn::sec05 {

// C13: d = 512, h = 8 gives d_k = 64, so the scores are divided by √64 = 8; W_q, W_k, W_v, W_o hold 4d² whatever h is.
struct SplitFigures {
    std::size_t d_model = 0, n_heads = 0;  // d_k = d_model / n_heads
    double score_variance = 0;             // of the per-head scores of random N(0, 1) q and k (theory: d_k)
    double off_by_dk = 0;                  // the forward's weights against softmax(q_h k_hᵀ / √d_k) by hand: max |diff|
    double off_by_d = 0;                   // … against softmax(q_h k_hᵀ / √d_model)
    std::vector<std::size_t> params;       // W_q, W_k, W_v, W_o at each head count, the first at one head
};
// The tolerances: the forward agrees with √d_k to float rounding of a 32-term softmax (kRounding; measured at seed 0:
// 0, the same float operations), and a forward dividing by √d_model would miss by more than kWrongDivisor (0.344 at
// seed 0); the per-head score variance over d_k is 1 within kVarianceTol.
constexpr double kRounding = 1e-5, kWrongDivisor = 0.1, kVarianceTol = 0.05;
Claim c13_claim(const SplitFigures& f);

// C14 over the seeds: four heads with W_o against one head without it on the pronoun task. Measured at the default
// seeds 0…2 (3,000 steps): four heads ahead in held-out accuracy by 41.6, 26.9 and 42.2 points (seeds 3 and 4: 28.1,
// 32.2). The chapter measures perplexity on the corpus (12_language_model's C14); here the same two models answer the task.
struct HeadsOverSeeds {
    std::vector<std::uint64_t> seeds;
    std::vector<double> gaps;      // four heads' held-out accuracy less one head's, in points, at each seed
    std::size_t d_model = 0;
    std::size_t extra_params = 0;  // four heads' parameters less one head's (the claim: d² + d, W_o and its bias)
    int steps = 0;                 // training steps of each model
};
void add_c14_claim(ClaimReport& claims, const HeadsOverSeeds& r);

}  // namespace attn::sec05
