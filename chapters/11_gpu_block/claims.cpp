#include "chapters/11_gpu_block/claims.hpp"

#include <string>

#include "report/table.hpp"

namespace attn::sec11 {

void add_c31_claim(ClaimReport& claims, const WallShape& s, int d_model, int n_heads) {
    if (!s.v2_memory_ratio || !s.v3_memory_ratio || !s.projections_exponent) {
        claims.skip("C31", "the table has no doubling that both v2 and v3 ran (raise --max-T)");
        return;
    }
    // The chapter's 3.91 at its last doubling: within (3.3, 4.5) for the materialised matrix (→ 4 from below);
    // under 2.5 for the tiled kernel (→ 2); the projections' time under n^1.3 (→ n).
    const double v2 = *s.v2_memory_ratio, v3 = *s.v3_memory_ratio, proj = *s.projections_exponent;
    const bool agrees = v2 > 3.3 && v2 < 4.5 && v3 < 2.5 && proj < 1.3;
    auto exponent = [](double e) { return "n^" + fmt(e, 2); };
    claims.add("C31",
               "one layer, d = " + std::to_string(d_model) + ", " + std::to_string(n_heads) +
                   " heads, fp32: the attention matrices grow as n², everything else as n",
               "doubling n: memory x3.91 (→ 4), fitted n^1.87, materialised; projections linear",
               "v2 memory x" + fmt(v2, 2) + " at the last doubling" +
                   (s.v2_memory_exponent ? " (fitted " + exponent(*s.v2_memory_exponent) + ")" : std::string()) + "; v3 memory x" +
                   fmt(v3, 2) + "; projections time ~ " + exponent(proj),
               agrees_if(agrees));
}

}  // namespace attn::sec11
