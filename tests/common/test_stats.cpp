#include <catch2/catch.hpp>

#include <cmath>

#include "../spec.hpp"
#include "attn/error.hpp"
#include "attn/stats.hpp"

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
