// The seeded RNG: the same seed gives bit-identical draws; the draws have the right distribution.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "core/rng.hpp"
#include "math/stats.hpp"

using namespace attn;

TEST_CASE("the same seed and stream give bit-identical tensors", "[rng]") {
    Rng a(42), b(42);
    const Mat x = a.normal_mat(50, 7), y = b.normal_mat(50, 7);
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
    CHECK(a.permutation(20) == b.permutation(20));
}

TEST_CASE("different seeds or streams give different draws", "[rng]") {
    CHECK(Rng(1).next_u64() != Rng(2).next_u64());
    CHECK(Rng(1, 1).next_u64() != Rng(1, 2).next_u64());
}

TEST_CASE("normal draws have mean 0 and variance 1", "[rng]") {
    Rng rng(7);
    const Vec x = rng.normal_vec(200000);
    CHECK(std::fabs(mean_of(x)) < 0.01);              // sd of the mean: 1/sqrt(2e5) = 0.0022
    CHECK(std::fabs(variance_of(x) - 1.0) < 0.015);  // sd of the variance: sqrt(2/2e5) = 0.0032
}

TEST_CASE("uniform and below stay in range — permutation is a permutation", "[rng]") {
    Rng rng(9);
    for (int i = 0; i < 1000; ++i) {
        const double u = rng.uniform();
        CHECK((u >= 0.0 && u < 1.0));
        CHECK(rng.below(7) < 7);
    }
    auto p = rng.permutation(100);
    std::sort(p.begin(), p.end());
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(p[i] == i);
}
