// The vectorised erf, exp and GELU (fast/vmath.hpp, layers.cpp) against std::erf, std::exp and the plain-loop
// GELU reference, on dense sweeps and on shapes that are not multiples of any vector width.
#include <catch2/catch.hpp>

#include <cmath>

#include "../spec.hpp"
#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "fast/multi_head.hpp"
#include "fast/vmath.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"

using namespace attn;

TEST_CASE("erf_rational stays within 5e-7 of erf over a dense sweep of [-6, 6]", "[vmath][gelu]") {
    double worst = 0;
    for (int i = 0; i <= 12'000'000; ++i) {  // steps of 1e-6
        const float x = -6.0f + static_cast<float>(i) * 1e-6f;
        worst = std::max(worst, std::fabs(fast::erf_rational(x) - std::erf(static_cast<double>(x))));
    }
    INFO("max |erf_rational - erf| = " << worst);
    CHECK(worst < 5e-7);  // measured 4.7e-7, near x = 3.27 (8 float ulps of 1); |x| < 1: a few ulps
}

TEST_CASE("exp_poly stays within 2 float ulps (relative 1.2e-7) of exp over [-87, 88]", "[vmath]") {
    double worst = 0;
    for (int i = 0; i <= 1'750'000; ++i) {
        const float x = -87.0f + static_cast<float>(i) * 1e-4f;
        const double e = std::exp(static_cast<double>(x));
        worst = std::max(worst, std::fabs(fast::exp_poly(x) - e) / e);
    }
    INFO("max relative error = " << worst);
    CHECK(worst < 1.2e-7);  // measured 8.2e-8
    CHECK(fast::exp_poly(-200.0f) >= 0.0f);
    CHECK(fast::exp_poly(-200.0f) < 1e-37f);
}

TEST_CASE("gelu_forward and gelu_backward match their std::erf references on ragged shapes", "[vmath][gelu]") {
    Rng rng(41);
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 7}, {5, 13}, {17, 33}, {2, 1031}}) {
        Mat x = rng.normal_mat(rows, cols);
        x *= 3.0f;  // reach the tails, where erf saturates
        const Mat dy = rng.normal_mat(rows, cols);
        CHECK(max_abs_diff(fast::gelu_forward(x), spec::gelu(x)) < 2e-6);
        CHECK(max_abs_diff(fast::gelu_backward(x, dy), spec::gelu_backward(x, dy)) < 2e-6);
    }
}

TEST_CASE("causal_softmax matches masked_softmax of the scaled scores, zeros above the diagonal", "[vmath][attention]") {
    Rng rng(42);
    for (const std::size_t T : {1u, 5u, 9u, 33u}) {
        const std::size_t heads = 3;
        const float scale = 0.35f;
        Tensor3 scores = Tensor3::from_shape({heads, T, T}), weights = Tensor3::from_shape({heads, T, T});
        rng.fill_normal(scores.data(), scores.size());
        fast::causal_softmax(scores.data(), weights.data(), heads, T, scale);
        for (std::size_t h = 0; h < heads; ++h) {
            const Mat s = xt::view(scores, h), w = xt::view(weights, h);
            CHECK(max_abs_diff(w, masked_softmax(Mat(s * scale), causal_mask(T))) < 1e-6);
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = t + 1; j < T; ++j) CHECK(w(t, j) == 0.0f);
        }
    }
}

TEST_CASE("cross_entropy_forward's probabilities match softmax_rows on ragged vocabularies", "[vmath][cross-entropy]") {
    Rng rng(43);
    for (const std::size_t V : {1u, 7u, 49u, 1031u}) {
        Mat logits = rng.normal_mat(5, V);
        logits *= 4.0f;
        const std::vector<int> targets = {0, static_cast<int>(V - 1), -1, 0, static_cast<int>(V / 2)};
        const fast::CrossEntropy ce = fast::cross_entropy_forward(logits, targets);
        const Mat p = softmax_rows(logits);
        // softmax_rows sums left to right, the fast one in 16 lanes: over V terms the two float sums differ by
        // about √V ulps (1.3e-6 at V = 1031, where a probability reaches 0.76)
        CHECK(max_abs_diff(ce.probs, p) < 1e-7 * std::sqrt(static_cast<double>(V)) + 1e-7);
        double loss = 0;
        for (std::size_t n = 0; n < targets.size(); ++n)
            if (targets[n] >= 0) loss -= std::log(static_cast<double>(p(n, targets[n])));
        CHECK(ce.loss == Approx(loss / 4).epsilon(1e-5));
    }
}
