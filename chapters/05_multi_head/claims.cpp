#include "chapters/05_multi_head/claims.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "report/table.hpp"

namespace attn::sec05 {

Claim c13_claim(const SplitFigures& f) {
    const std::size_t d = f.d_model, dh = d / f.n_heads;
    const bool same_params = std::all_of(f.params.begin(), f.params.end(), [&](std::size_t n) { return n == 4 * d * d; });
    return {.id = "C13",
            .what = "d = 512, h = 8: d_k = 64, scale 8; 4d² parameters whatever h is",
            .chapter = "64, 8, 1,048,576 for every h",
            .ours = std::to_string(dh) + ", " + (f.off_by_dk < kRounding ? fmt(std::sqrt(dh), 0) : std::string("not 8")) + ", " +
                    fmt_count(static_cast<long long>(f.params.front())) + (same_params ? " for every h" : " (varies with h)"),
            .verdict = agrees_if(dh == 64 && f.off_by_dk < kRounding && f.off_by_d > kWrongDivisor && same_params &&
                                 std::fabs(f.score_variance / dh - 1) < kVarianceTol),
            .why = {}};
}

void add_c14_claim(ClaimReport& claims, const HeadsOverSeeds& r) {
    const std::size_t dm = r.d_model;
    const bool exact = r.extra_params == dm * dm + dm;  // the price, the same at every seed
    // The chapter's figure is a language model's perplexity (the ladder's, 12_language_model); this is the same idea on
    // another task and metric, so only its direction is the chapter's and no size of the chapter's is compared.
    claims.add("C14", "several heads attend to several places at once: four heads with W_o beat one head without it (d² + d more parameters; "
                      "the same idea on the pronoun task, accuracy, " + std::to_string(r.steps) + " steps, width " + std::to_string(dm) +
                      "; the chapter's figure, a perplexity, is 12_language_model's)",
               "four heads better (its figure is the language model's: 12_language_model ladder)",
               OverSeeds{.seeds = r.seeds,
                         .as_stated = {SeedFigure{.name = "four heads' held-out accuracy - one head's, for " + fmt_count(static_cast<long long>(r.extra_params)) +
                                                          " = " + std::to_string(dm) + "² + " + std::to_string(dm) + (exact ? "" : " (NOT)") + " more parameters",
                                                  .values = exact ? r.gaps : std::vector<double>(r.gaps.size(), -1.0),
                                                  .digits = 1,
                                                  .unit = "points"}}});
}

}  // namespace attn::sec05
