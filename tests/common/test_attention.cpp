// Definition 9.1 against plain-loop specs on random shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "../spec.hpp"
#include "core/rng.hpp"
#include "math/attention.hpp"
#include "math/positions.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"

using namespace attn;
using Catch::Matchers::Contains;

TEST_CASE("attention matches the spec on random shapes, with and without the causal mask", "[attention]") {
    Rng rng(31);
    for (int trial = 0; trial < 15; ++trial) {
        const std::size_t T = 1 + rng.below(12), dk = 1 + rng.below(16), dv = 1 + rng.below(8);
        const Mat q = rng.normal_mat(T, dk), k = rng.normal_mat(T, dk), v = rng.normal_mat(T, dv);
        CHECK(max_abs_diff(attention(q, k, v).out, spec::attention(q, k, v)) < 1e-5);
        const Mask causal = causal_mask(T);
        CHECK(max_abs_diff(attention(q, k, v, &causal).out, spec::attention(q, k, v, true)) < 1e-5);
    }
}

TEST_CASE("attention adds a given bias to the scaled scores before the softmax (ALiBi's, Section 9.6)", "[attention]") {
    Rng rng(33);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t T = 1 + rng.below(12), dk = 1 + rng.below(16), dv = 1 + rng.below(8);
        const Mat q = rng.normal_mat(T, dk), k = rng.normal_mat(T, dk), v = rng.normal_mat(T, dv);
        const Mat bias = alibi_bias(T, 0.25 * static_cast<double>(1 + rng.below(4)));
        const Mask causal = causal_mask(T);
        const AttentionSteps r = attention(q, k, v, &causal, true, &bias);
        CHECK(max_abs_diff(r.out, spec::attention(q, k, v, true, &bias)) < 1e-5);
        CHECK(max_abs_diff(r.scaled, r.scores / std::sqrt(static_cast<float>(dk)) + bias) < 1e-5);  // scaled holds the sum
        if (T > 1) CHECK(max_abs_diff(r.out, spec::attention(q, k, v, true)) > 1e-4);  // the bias moved the weights
    }
}

TEST_CASE("cross-shaped attention: T_q queries over T_k keys", "[attention]") {
    Rng rng(32);
    const Mat q = rng.normal_mat(3, 4), k = rng.normal_mat(7, 4), v = rng.normal_mat(7, 5);
    const AttentionSteps r = attention(q, k, v);
    CHECK(r.weights.shape() == std::array<std::size_t, 2>{3, 7});
    CHECK(r.out.shape() == std::array<std::size_t, 2>{3, 5});
    CHECK(max_abs_diff(r.out, spec::attention(q, k, v)) < 1e-5);
}

TEST_CASE("attention refuses mismatched shapes and non-finite inputs, naming them", "[attention][errors]") {
    const Mat q = xt::zeros<float>({1, 2}), k = xt::zeros<float>({3, 3}), v = xt::zeros<float>({3, 2});
    CHECK_THROWS_WITH(attention(q, k, v), "attention: q (1, 2) and k (3, 3) differ in d_k");
    const Mat k2 = xt::zeros<float>({3, 2}), v2 = xt::zeros<float>({4, 2});
    CHECK_THROWS_WITH(attention(q, k2, v2), "attention: k (3, 2) and v (4, 2) differ in the number of keys T_k");
    Mat bad_q = q;
    bad_q(0, 1) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(attention(bad_q, k2, v), Contains("attention (q)") && Contains("non-finite"));
    const Mat bias = xt::zeros<float>({2, 3});
    CHECK_THROWS_WITH(attention(q, k2, xt::zeros<float>({3, 2}), nullptr, true, &bias),
                      "attention: bias (2, 3) does not match the scores (1, 3) of q (1, 2) and k (3, 2)");
}
