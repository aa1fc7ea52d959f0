// Claims C25–C28 — Section 9.6, "Mã hoá vị trí".
#include <catch2/catch.hpp>

#include <cmath>

#include <xtensor-blas/xlinalg.hpp>

#include "core/rng.hpp"
#include "fast/matmul.hpp"
#include "math/attention.hpp"
#include "math/averaging.hpp"
#include "math/positions.hpp"
#include "math/stats.hpp"

using namespace attn;

TEST_CASE("C25: without positions self-attention is permutation-equivariant — positions break it", "[claims][C25][sec09]") {
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
        Rng rng(seed);
        const std::size_t T = 7, d = 16;
        const Mat x = rng.normal_mat(T, d), wq = rng.normal_mat(d, d) * 0.25f, wk = rng.normal_mat(d, d) * 0.25f, wv = rng.normal_mat(d, d);
        auto sa = [&](const Mat& in) { return attention(fast::matmul(in, wq), fast::matmul(in, wk), fast::matmul(in, wv)).out; };
        const auto perm = rng.permutation(T);
        // float noise: softmax sums its terms in another order after the shuffle
        CHECK(max_abs_diff(sa(gather_rows(x, perm)), gather_rows(sa(x), perm)) < 1e-5);
        const Mat P = sinusoidal_table(T, d);
        CHECK(max_abs_diff(sa(gather_rows(x, perm) + P), gather_rows(sa(x + P), perm)) > 1e-2);
    }
}

TEST_CASE("C26: the sinusoidal table, and p_{i+k} = M_k p_i for one M_k at every i", "[claims][C26][sec09]") {
    const Mat p = sinusoidal_table(200, 32);
    CHECK(p(0, 0) == 0.0f);
    CHECK(p(0, 1) == 1.0f);
    CHECK(p(1, 0) == Approx(std::sin(1.0)));
    CHECK(p(3, 5) == Approx(std::cos(3.0 / std::pow(10000.0, 4.0 / 32))));
    for (std::size_t k : {1u, 7u, 50u}) {
        const Mat M = sinusoidal_shift(k, 32);
        double worst = 0;
        for (std::size_t i = 0; i + k < 200; ++i)
            worst = std::max(worst, max_abs_diff(Vec(xt::linalg::dot(M, Vec(xt::row(p, i)))), Vec(xt::row(p, i + k))));
        INFO("k = " << k);
        CHECK(worst < 1e-5);
        CHECK(max_abs_diff(fast::matmul(M, Mat(xt::transpose(M))), Mat(xt::eye<float>(32))) < 1e-6);  // a rotation
    }
}

TEST_CASE("C27: with RoPE, q_t . k_i depends only on t - i", "[claims][C27][sec09]") {
    Rng rng(27);
    const Mat q = rng.normal_mat(1, 32), k = rng.normal_mat(1, 32);
    auto score = [&](std::size_t t, std::size_t i) {
        return static_cast<double>(fast::matmul_nt(rope(q, t), rope(k, i))(0, 0));
    };
    for (std::size_t off : {0u, 1u, 5u, 40u})
        for (std::size_t s : {0u, 3u, 100u, 999u}) CHECK(score(s + off, s) == Approx(score(off, 0)).margin(1e-3));
    CHECK(std::fabs(score(1, 0) - score(5, 0)) > 1e-2);  // and it does depend on the offset
    // Rotations keep lengths.
    CHECK(xt::sum(rope(q, 17) * rope(q, 17))() == Approx(xt::sum(q * q)()).epsilon(1e-5));
}

TEST_CASE("C28: ALiBi slopes 2^(-8j/h) and a bias linear in the distance", "[claims][C28][sec09]") {
    const auto m = alibi_slopes(8);
    REQUIRE(m.size() == 8);
    CHECK(m.front() == 0.5);
    CHECK(m.back() == 1.0 / 256);
    const auto m4 = alibi_slopes(4);
    CHECK(m4.front() == 0.25);
    const Mat b = alibi_bias(6, 0.5);
    for (std::size_t t = 0; t < 6; ++t)
        for (std::size_t i = 0; i < 6; ++i) CHECK(b(t, i) == (i <= t ? -0.5f * static_cast<float>(t - i) : 0.0f));
}
