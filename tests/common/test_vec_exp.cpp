// Section 9.8: the fast path's exp (attn/vec_exp.hpp) against std::exp over a dense sweep of its
// domain, its special values, the 8-lane path against the scalar one bit for bit, and the row max and
// sum that come with it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attn/rng.hpp"
#include "attn/vec_exp.hpp"
#include "attn/vmath.hpp"

using namespace attn;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

float from_bits(std::uint32_t b) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}
std::uint32_t bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// The sweep of [−86.5, 0]: 2²² evenly spaced points, then every 257th float (by bit pattern, so every
// binade of small |x| is visited too).
std::vector<float> sweep() {
    std::vector<float> xs;
    const int N = 1 << 22;
    for (int i = 0; i <= N; ++i) xs.push_back(static_cast<float>(-86.5 * i / N));
    for (std::uint32_t b = bits(-0.0f); b <= bits(-86.5f); b += 257) xs.push_back(from_bits(b));
    return xs;
}

}  // namespace

TEST_CASE("exp_nonpositive is within 1 ulp of exp over a dense sweep of [-86.5, 0]", "[vec_exp]") {
    // Measured on the whole of [−86.5, 0], every float: at most 0.98 ulp, relative error 8.1e-8.
    // A wrong digit in a polynomial coefficient or in ln 2's two parts costs more than that.
    double max_ulp = 0, max_rel = 0;
    float worst = 0;
    for (float x : sweep()) {
        const double exact = std::exp(static_cast<double>(x));
        const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);  // float spacing at exact (all normal here)
        const double err = std::fabs(exp_nonpositive(x) - exact);
        if (err / ulp > max_ulp) max_ulp = err / ulp, worst = x;
        max_rel = std::max(max_rel, err / exact);
    }
    INFO("max error " << max_ulp << " ulp at x = " << worst << "; max relative error " << max_rel);
    CHECK(max_ulp <= 1.0);
    CHECK(max_rel < 1e-7);
}

TEST_CASE("exp_nonpositive: exp(0) = 1, exp(-inf) = 0, below -86.5 gives 0, NaN stays NaN", "[vec_exp]") {
    CHECK(exp_nonpositive(0.0f) == 1.0f);
    CHECK(exp_nonpositive(-0.0f) == 1.0f);
    CHECK(exp_nonpositive(-inf) == 0.0f);  // the first tile's c = exp(−∞ − m')
    CHECK(exp_nonpositive(-86.5f) > 0.0f);
    for (float x : {std::nextafter(-86.5f, -inf), -87.0f, -100.0f, -1e30f, std::numeric_limits<float>::lowest()})
        CHECK(exp_nonpositive(x) == 0.0f);
    CHECK(std::isnan(exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("exp_row_sum's 8 lanes give the scalar exp's bits, special values included", "[vec_exp]") {
    std::vector<float> xs = sweep();
    for (float x : {-inf, std::numeric_limits<float>::quiet_NaN(), -86.6f, -1e30f, 0.0f, -0.0f}) xs.push_back(x);
    while (xs.size() % 8 != 3) xs.push_back(-1.0f);  // and a tail of 3 for the scalar loop
    std::vector<float> p = xs;
    exp_row_sum(p.data(), p.size(), 0.0f);  // m = 0: p = exp(x − 0) = exp(x)
    std::size_t differ = 0, first = 0;
    for (std::size_t j = 0; j < xs.size(); ++j) {
        if (bits(p[j]) != bits(exp_nonpositive(xs[j])) && differ++ == 0) first = j;
    }
    INFO(differ << " of " << xs.size() << " differ; the first at x = " << xs[first]);
    CHECK(differ == 0);
}

TEST_CASE("exp_row_sum returns the sum of the weights it writes, and row_max the max", "[vec_exp]") {
    Rng rng(86);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = 1 + rng.below(40);
        std::vector<float> s(n);
        rng.fill_normal(s.data(), n);
        for (float& x : s) x *= 4.0f;
        const float m = row_max(s.data(), n);
        INFO("trial " << trial << ", n " << n);
        CHECK(m == *std::max_element(s.begin(), s.end()));
        std::vector<float> p = s;
        const float sum = exp_row_sum(p.data(), n, m);
        double expected = 0;
        for (std::size_t j = 0; j < n; ++j) {
            CHECK(bits(p[j]) == bits(exp_nonpositive(s[j] - m)));
            expected += p[j];
        }
        CHECK(std::fabs(sum - expected) <= 1e-6 * expected);
    }
}
