#include "chapters/04_learned_attention/claims.hpp"

#include <string>

namespace attn::sec04 {

void add_c34_claim(ClaimReport& claims, const std::vector<std::uint64_t>& seeds, const std::vector<CategorySeed>& per_seed, int max_steps) {
    const auto figure = [&](std::string name, auto f) { return figure_over(per_seed, std::move(name), f, kNoSize, "points"); };
    // "Solves it": within kSolvesTol of 100 %, having fit its training sentences (a model that does not is at -100).
    const SeedFigure solves = figure("uniform's held-out accuracy - 95 %", [](const CategorySeed& c) { return c.bag_fits ? 100 * (c.bag - (1 - kSolvesTol)) : -100.0; });
    claims.add("C34", "category version: the uniform average solves it, and beats one block (bag of words wins; each model trained "
                      "until it fits its training sentences, at most " + std::to_string(max_steps) + " steps)",
               "uniform 100 %, one block 91.7 %",
               OverSeeds{.seeds = seeds,
                         .as_stated = {solves, figure("uniform's held-out accuracy - one block's (both fit)", [](const CategorySeed& c) {
                                           return c.bag_fits && c.block_fits ? 100 * (c.bag - c.block) : -100.0;
                                       })},
                         .weaker_name = "the uniform average solves it",
                         .weaker = {solves}});
}

}  // namespace attn::sec04
