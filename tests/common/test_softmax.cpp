// softmax, masked softmax and the mask policy, against the plain-loop spec on random shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "../spec.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"

using namespace attn;
using Catch::Matchers::Contains;
constexpr float inf = std::numeric_limits<float>::infinity();

TEST_CASE("softmax_rows matches the plain-loop spec on random shapes — rows sum to 1", "[softmax]") {
    Rng rng(11);
    for (int trial = 0; trial < 20; ++trial) {
        const std::size_t rows = 1 + rng.below(9), cols = 1 + rng.below(40);
        const Mat s = rng.normal_mat(rows, cols) * 3.0f;
        const Mat p = softmax_rows(s);
        CHECK(max_abs_diff(p, spec::softmax_rows(s)) < 1e-6);
        for (std::size_t i = 0; i < rows; ++i) CHECK(xt::sum(xt::row(p, i))() == Approx(1.0).margin(1e-6));
    }
}

TEST_CASE("softmax is stable: huge scores do not overflow", "[softmax]") {
    const Vec p = softmax(Vec{1000.0f, 1001.0f});
    CHECK(p(0) == Approx(1.0 / (1.0 + std::exp(1.0))).epsilon(1e-6));
    CHECK(p(1) == Approx(std::exp(1.0) / (1.0 + std::exp(1.0))).epsilon(1e-6));
    const Vec q = softmax(Vec{-1000.0f, -1000.0f, -1000.0f});
    CHECK(q(0) == Approx(1.0 / 3));
}

TEST_CASE("softmax is unchanged by adding a constant to every score", "[softmax]") {
    Rng rng(3);
    const Vec s = rng.normal_vec(16);
    CHECK(max_abs_diff(softmax(s), softmax(Vec(s + 7.5f))) < 1e-6);
}

TEST_CASE("a -inf score gets weight exactly 0 and the rest renormalise", "[softmax][mask]") {
    const Vec p = softmax(Vec{0.0f, std::log(2.0f), -inf});
    CHECK(p(0) == Approx(1.0 / 3));
    CHECK(p(1) == Approx(2.0 / 3));
    CHECK(p(2) == 0.0f);
}

TEST_CASE("masked_softmax: blocked entries are 0, kept entries match the spec", "[softmax][mask]") {
    Rng rng(5);
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t T = 1 + rng.below(12);
        const Mat s = rng.normal_mat(T, T);
        const Mat p = masked_softmax(s, causal_mask(T));
        for (std::size_t t = 0; t < T; ++t) {
            std::vector<bool> keep(T);
            for (std::size_t i = 0; i < T; ++i) keep[i] = i <= t;
            const Vec expected = spec::softmax(Vec(xt::row(s, t)), keep);
            CHECK(max_abs_diff(Vec(xt::row(p, t)), expected) < 1e-6);
            for (std::size_t i = t + 1; i < T; ++i) CHECK(p(t, i) == 0.0f);
        }
    }
}

TEST_CASE("causal_mask keeps the diagonal and the past, blocks the future", "[mask]") {
    const Mask m = causal_mask(4);
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t i = 0; i < 4; ++i) CHECK(m(t, i) == (i <= t));
}

TEST_CASE("a fully masked row is an error naming the row and the shape (policy: error)", "[softmax][mask][errors]") {
    Mask keep = causal_mask(3);
    keep(2, 0) = keep(2, 1) = keep(2, 2) = false;
    const Mat s = xt::zeros<float>({3, 3});
    CHECK_THROWS_WITH(masked_softmax(s, keep), "masked_softmax: row 2 of (3, 3) is fully masked (policy: error)");
    const Mat all_minus_inf = {{0.0f, 1.0f}, {-inf, -inf}};
    CHECK_THROWS_WITH(softmax_rows(all_minus_inf), "softmax_rows: row 1 of (2, 2) is fully masked (policy: error)");
}

TEST_CASE("NaN and +inf scores are errors, not silent garbage", "[softmax][errors]") {
    const Mat with_nan = {{0.0f, std::nanf("")}};
    CHECK_THROWS_WITH(softmax_rows(with_nan), Contains("(0, 1)") && Contains("NaN"));
    const Mat with_inf = {{inf, 0.0f}};
    CHECK_THROWS_WITH(softmax_rows(with_inf), Contains("+inf"));
    CHECK_THROWS_AS(softmax(Vec{}), Error);
}

TEST_CASE("a mask of the wrong shape is an error naming both shapes", "[mask][errors]") {
    const Mat s = xt::zeros<float>({3, 4});
    CHECK_THROWS_WITH(masked_softmax(s, causal_mask(3)), "masked_softmax: mask (3, 3) does not match scores (3, 4)");
    CHECK_THROWS_WITH(masked_fill(s, causal_mask(4), 0.0f), Contains("(4, 4)") && Contains("(3, 4)"));
}

TEST_CASE("softmax_jacobian matches central finite differences of softmax", "[softmax][gradcheck]") {
    Rng rng(8);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t n = 2 + rng.below(7);
        const Vec s = rng.normal_vec(n);
        const Mat J = softmax_jacobian(softmax(s));
        const Mat numeric = spec::softmax_jacobian_fd(s);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) CHECK(J(i, j) == Approx(numeric(i, j)).margin(2e-4));
        // Rows of J sum to 0: adding a constant to every score changes nothing.
        for (std::size_t i = 0; i < n; ++i) CHECK(xt::sum(xt::row(J, i))() == Approx(0.0).margin(1e-6));
    }
}
