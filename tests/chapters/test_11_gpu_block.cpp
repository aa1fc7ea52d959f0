// C31 on the GPU (11_gpu_block's n² table): the criterion of chapters/11_gpu_block/claims.cpp, which the
// program's summary uses, on tables whose verdict is known. The table itself needs a device (label gpu).
#include <catch2/catch.hpp>

#include "chapters/11_gpu_block/claims.hpp"

using namespace attn;
using namespace attn::sec11;

namespace {
Claim decide(const WallShape& shape) {
    ClaimReport report;
    add_c31_claim(report, shape, 512, 8);
    REQUIRE(report.claims().size() == 1);
    return report.claims()[0];
}
}  // namespace

TEST_CASE("C31's criterion on the GPU: the chapter's doubling agrees, and a matrix that does not grow as n², or a tiled kernel that does, differs",
          "[claims][C31][sec11]") {
    // The chapter's last doubling: memory x3.91, fitted n^1.87; a tiled kernel x2; the projections linear.
    const WallShape chapter{.v2_memory_ratio = 3.91, .v3_memory_ratio = 2.0, .v2_memory_exponent = 1.87, .projections_exponent = 1.0};
    const Claim c = decide(chapter);
    INFO(c.ours);
    CHECK(c.verdict == Verdict::agrees);
    CHECK_THAT(c.ours, Catch::Contains("v2 memory x3.91") && Catch::Contains("(fitted n^1.87)"));

    WallShape linear = chapter;  // the matrix not materialised after all
    linear.v2_memory_ratio = 2.1;
    CHECK(decide(linear).verdict == Verdict::differs);
    WallShape tiled_quadratic = chapter;  // the tiled kernel holding a T × T matrix
    tiled_quadratic.v3_memory_ratio = 3.9;
    CHECK(decide(tiled_quadratic).verdict == Verdict::differs);
    WallShape slow_projections = chapter;  // projections growing faster than n
    slow_projections.projections_exponent = 1.6;
    CHECK(decide(slow_projections).verdict == Verdict::differs);
}

TEST_CASE("C31 on the GPU is skipped, not decided, when no doubling ran on both kernels", "[claims][C31][sec11]") {
    ClaimReport report;
    add_c31_claim(report, {.v2_memory_ratio = std::nullopt, .v3_memory_ratio = 2.0, .v2_memory_exponent = std::nullopt,
                           .projections_exponent = 1.0},
                  512, 8);
    CHECK(report.claims().empty());
}
