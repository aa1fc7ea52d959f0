// The claim 11_gpu_block decides on the GPU: C31, the n² wall — its statement, the chapter's figures and its
// criterion, shared by the program's summary and its test (tests/chapters/test_11_gpu_block.cpp). Plain
// figures in, no CUDA: it builds and is tested everywhere.
#pragma once

#include <optional>

#include "report/claims.hpp"

namespace attn::sec11 {

// What the n² table measured (wall.hpp's WallFigures, less what a claim does not read).
struct WallShape {
    std::optional<double> v2_memory_ratio, v3_memory_ratio;  // peak memory at the last doubling of n each ran
    std::optional<double> v2_memory_exponent;                 // fitted over v2's last four rows
    std::optional<double> projections_exponent;               // the projections' time, fitted likewise
};

// C31 on the GPU: the materialising kernel's memory is multiplied by → 4 per doubling of n (from below: the
// linear buffers weigh less and less), the tiled kernel's by → 2, and the projections' time grows linearly.
// Skipped when the table has no doubling that both v2 and v3 ran.
void add_c31_claim(ClaimReport& claims, const WallShape& shape, int d_model, int n_heads);

}  // namespace attn::sec11
