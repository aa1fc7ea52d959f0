// Claims C01–C03 — Definition 9.1, Example 9.1 and the worked row of scores 0, ln 2, ln 3 (Section 9.1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "math/attention.hpp"
#include "math/averaging.hpp"
#include "math/stats.hpp"
#include "report/table.hpp"

using namespace attn;

namespace {
const Mat q91 = {{1, 0}};
const Mat k91 = {{1, 0}, {0, 1}, {1, 1}};
const Mat v91 = {{1, 0}, {0, 1}, {2, 2}};
}  // namespace

TEST_CASE("C01: Example 9.1 step by step, to the chapter's three decimals", "[claims][C01][sec02]") {
    const AttentionSteps r = attention(q91, k91, v91);
    CHECK(fmt_vec(Vec(xt::row(r.scores, 0)), 3) == "(1.000, 0.000, 1.000)");
    CHECK(fmt_vec(Vec(xt::row(r.scaled, 0)), 3) == "(0.707, 0.000, 0.707)");
    CHECK(fmt_vec(Vec(xt::row(r.weights, 0)), 3) == "(0.401, 0.198, 0.401)");
    CHECK(fmt_vec(Vec(xt::row(r.out, 0)), 3) == "(1.203, 1.000)");
    // and exactly: w1 = e^{1/√2} / (2 e^{1/√2} + 1)
    const double e = std::exp(1 / std::sqrt(2.0));
    CHECK(r.weights(0, 0) == Approx(e / (2 * e + 1)).epsilon(1e-6));
}

TEST_CASE("C02: permuting the key-value pairs permutes the weights, not the output", "[claims][C02][sec02]") {
    const Vec out = xt::row(attention(q91, k91, v91).out, 0);
    const Vec w = xt::row(attention(q91, k91, v91).weights, 0);
    std::vector<std::size_t> order = {0, 1, 2};
    int orders = 0;
    do {
        const AttentionSteps p = attention(q91, gather_rows(k91, order), gather_rows(v91, order));
        CHECK(max_abs_diff(Vec(xt::row(p.out, 0)), out) < 1e-6);
        for (std::size_t j = 0; j < 3; ++j) CHECK(p.weights(0, j) == Approx(w(order[j])));
        ++orders;
    } while (std::next_permutation(order.begin(), order.end()));
    CHECK(orders == 6);
}

TEST_CASE("C03: scores 0, ln 2, ln 3 give weights 1/6, 2/6, 3/6 and output (5/3, 7/6)", "[claims][C03][sec02]") {
    const Mat s = {{0.0f, std::log(2.0f), std::log(3.0f)}};
    const Mat v = {{1, 0}, {0, 2}, {3, 1}};
    const AttentionSteps r = attention_from_scores(s, v);
    CHECK(r.weights(0, 0) == Approx(1.0 / 6).epsilon(1e-6));
    CHECK(r.weights(0, 1) == Approx(2.0 / 6).epsilon(1e-6));
    CHECK(r.weights(0, 2) == Approx(3.0 / 6).epsilon(1e-6));
    CHECK(r.out(0, 0) == Approx(5.0 / 3).epsilon(1e-6));
    CHECK(r.out(0, 1) == Approx(7.0 / 6).epsilon(1e-6));
    CHECK(as_fraction(r.out(0, 0)) == "5/3");
    CHECK(as_fraction(r.out(0, 1)) == "7/6");
}
