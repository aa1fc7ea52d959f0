#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "../spec.hpp"
#include "core/error.hpp"
#include "math/stats.hpp"

using namespace attn;

TEST_CASE("entropy: uniform is ln n, one-hot is 0, and it matches the spec", "[stats]") {
    const Vec uniform = xt::ones<float>({64}) / 64.0f;
    CHECK(entropy(uniform) == Approx(std::log(64.0)).epsilon(1e-6));
    CHECK(entropy(Vec{0.0f, 1.0f, 0.0f}) == 0.0);
    const Vec w = {0.1f, 0.2f, 0.7f};
    CHECK(entropy(w) == Approx(spec::entropy(w)));
    CHECK(effective_tokens(entropy(uniform)) == Approx(64.0));
}

TEST_CASE("the Jacobian's trace is 1 - sum w^2 — frozen means every w(1-w) < 0.01", "[stats]") {
    const Vec w = {0.25f, 0.25f, 0.5f};
    CHECK(jacobian_trace(w.data(), w.size()) == Approx(1.0 - (0.0625 + 0.0625 + 0.25)));
    const Vec near_one_hot = {0.995f, 0.005f};
    CHECK(is_frozen(near_one_hot.data(), 2, 0.01));
    CHECK_FALSE(is_frozen(w.data(), 3, 0.01));
}

TEST_CASE("mean, variance and max_abs_diff", "[stats]") {
    const Vec x = {1, 2, 3, 4};
    CHECK(mean_of(x) == 2.5);
    CHECK(variance_of(x) == 1.25);
    CHECK(max_abs_diff(x, Vec{1, 2, 3, 5}) == 1.0);
    CHECK_THROWS_WITH(max_abs_diff(x, Vec{1, 2}), "max_abs_diff: shapes differ: (4,) vs (2,)");
}

TEST_CASE("max_abs_diff: a NaN anywhere is the largest difference, so no tolerance passes it", "[stats]") {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    CHECK(std::isnan(max_abs_diff(Vec{nan, 0}, Vec{0, 0})));
    CHECK(std::isnan(max_abs_diff(Vec{0, 0, 0}, Vec{0, 5, nan})));  // after a larger finite difference too
    CHECK(std::isnan(max_abs_diff(Vec{nan}, Vec{nan})));            // NaN is not equal to itself
    CHECK_FALSE(max_abs_diff(Vec{nan, 0}, Vec{0, 0}) < 1.0);
    CHECK(max_abs_diff(Vec{-inf, 1}, Vec{-inf, 1}) == 0.0);  // a masked score equals itself
    CHECK(max_abs_diff(Vec{-inf, 1}, Vec{0, 1}) == inf);
    Mat poisoned = Mat::from_shape({3, 4});
    poisoned.fill(nan);
    poisoned(0, 0) = 1;  // a kernel that wrote one entry and skipped the rest
    Mat want = Mat::from_shape({3, 4});
    want.fill(1);
    CHECK(std::isnan(max_abs_diff(poisoned, want)));
}
