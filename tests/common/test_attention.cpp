// Definition 9.1 against plain-loop specs on random shapes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "../spec.hpp"
#include "core/memory.hpp"
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

// Mục 9.8's tiled attention: the same function, a tile at a time. Shapes with several query and key tiles, so that
// the running max, the rescale c = exp(m − m') and the skipped causal tiles all act; within fp32's rounding of the
// double-precision spec (the spec's own softmax is fp32: 2e-5 absolute, as the fast engine's tiled attention).
TEST_CASE("tiled attention gives Definition 9.1's out, causal or not, at every tile size", "[attention][tiled]") {
    struct Case {
        std::size_t T_q, T_k, d_k, d_v, tile;
        bool causal;
    };
    std::vector<Case> cases = {
        {1, 1, 1, 1, 1, true},      // one token
        {37, 37, 8, 8, 1, true},    // tile 1: every tile one row and one key
        {37, 37, 8, 5, 64, true},   // tile > T: one tile, the diagonal one
        {100, 100, 16, 16, 32, true},  // T not a multiple of the tile
        {64, 64, 8, 8, 16, true},   // T a multiple of the tile
        {9, 9, 5, 3, 8, true},      // T = tile + 1
        {5, 23, 4, 6, 4, false},    // fewer queries than keys, unmasked
        {23, 5, 4, 6, 4, false},    // more queries than keys
    };
    Rng rng(34);
    for (int trial = 0; trial < 12; ++trial) {
        const bool causal = trial % 2 == 0;
        const std::size_t T_q = 1 + rng.below(90), T_k = causal ? T_q : 1 + rng.below(90);
        cases.push_back({T_q, T_k, 1 + rng.below(12), 1 + rng.below(12), 1 + rng.below(40), causal});
    }
    for (const Case& c : cases) {
        const Mat q = rng.normal_mat(c.T_q, c.d_k), k = rng.normal_mat(c.T_k, c.d_k), v = rng.normal_mat(c.T_k, c.d_v);
        INFO("T_q " << c.T_q << ", T_k " << c.T_k << ", d_k " << c.d_k << ", d_v " << c.d_v << ", tile " << c.tile
                    << (c.causal ? ", causal" : ", unmasked"));
        const Mat out = tiled_attention(q, k, v, c.causal, c.tile);
        REQUIRE(out.shape() == std::array<std::size_t, 2>{c.T_q, c.d_v});
        CHECK(max_abs_diff(out, spec::attention(q, k, v, c.causal)) < 2e-5);
        const Mask keep = causal_mask(c.T_q);
        CHECK(max_abs_diff(out, attention(q, k, v, c.causal ? &keep : nullptr).out) < 2e-5);
    }
}

TEST_CASE("tiled attention keeps large scores finite: the running max comes off before exp", "[attention][tiled]") {
    // q and k 30 times their usual size: scores of several hundred, whose exp overflows fp32 unless the running max
    // comes off first; tiles of 8 keys, so a row's largest score moves from tile to tile and the rescale acts.
    Rng rng(35);
    const std::size_t T = 40, d_k = 4;
    const Mat q = rng.normal_mat(T, d_k) * 30.0f, k = rng.normal_mat(T, d_k) * 30.0f, v = rng.normal_mat(T, 3);
    for (bool causal : {true, false}) {
        const Mat out = tiled_attention(q, k, v, causal, 8);
        REQUIRE(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }));
        CHECK(max_abs_diff(out, spec::attention(q, k, v, causal)) < 2e-5);
    }
}

TEST_CASE("tiled attention never holds T_q × T_k: its peak memory stays far below one scores matrix", "[attention][tiled][memory]") {
    Rng rng(36);
    const std::size_t T = 2048, d = 64;  // scores (T, T) would be 16 MiB
    const Mat q = rng.normal_mat(T, d), k = rng.normal_mat(T, d), v = rng.normal_mat(T, d);
    const double matrix = double(T * T) * sizeof(float);
    Mat tiled_out, full_out;
    tiled_attention(q, k, v, true);  // warm: OpenBLAS's buffers
    const PeakMemory tiled = measure_peak_memory([&] { tiled_out = tiled_attention(q, k, v, true); });
    const Mask keep = causal_mask(T);
    const PeakMemory full = measure_peak_memory([&] { full_out = attention(q, k, v, &keep).out; });
    INFO("tiled rise " << tiled.rise() << " B, attention() rise " << full.rise() << " B, one T x T matrix " << matrix << " B");
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer keeps freed blocks in a quarantine: every tile's temporaries stay resident, and the rise says so
    WARN("AddressSanitizer build: the measured peak memory is not checked");
#else
    CHECK(double(tiled.rise()) < matrix / 4);  // the output (0.5 MiB) and the tiles
    CHECK(double(full.rise()) > 2 * matrix);   // scores, scaled and weights, (T, T) each
#endif
    CHECK(max_abs_diff(tiled_out, full_out) < 2e-5);
}

TEST_CASE("tiled attention refuses what attention() refuses, a tile of 0, no keys and a causal mask over unequal lengths",
          "[attention][tiled][errors]") {
    const Mat q = xt::zeros<float>({2, 3}), k = xt::zeros<float>({4, 3}), v = xt::zeros<float>({4, 2});
    CHECK_THROWS_WITH(tiled_attention(q, xt::zeros<float>({4, 2}), v, false), "attention: q (2, 3) and k (4, 2) differ in d_k");
    CHECK_THROWS_WITH(tiled_attention(q, k, xt::zeros<float>({3, 2}), false),
                      "attention: k (4, 3) and v (3, 2) differ in the number of keys T_k");
    CHECK_THROWS_WITH(tiled_attention(q, k, v, false, 0), "tiled_attention: tile is 0");
    CHECK_THROWS_WITH(tiled_attention(q, xt::zeros<float>({0, 3}), xt::zeros<float>({0, 2}), false),
                      "tiled_attention: k (0, 3) holds no keys: a softmax over none is undefined");
    CHECK_THROWS_WITH(tiled_attention(q, k, v, true),
                      "tiled_attention: the causal mask needs as many queries as keys; q (2, 3), k (4, 3)");
    Mat bad_v = v;
    bad_v(3, 1) = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(tiled_attention(q, k, bad_v, false), Contains("attention (v)") && Contains("non-finite"));
    // finite q and k whose product overflows fp32: to +inf, an error as in attention(); to −inf, a weight of 0, and a
    // row with nothing else to see is fully masked
    const Mat huge = {{1e20f}}, up = {{1e20f}, {1.0f}}, down = {{-1e20f}, {0.0f}}, values = {{5.0f}, {7.0f}};
    CHECK_THROWS_WITH(tiled_attention(huge, up, values, false), "tiled_attention: score at (0, 0) of (1, 2) is +inf; scores must be finite");
    CHECK_THROWS_WITH(attention(huge, up, values), Contains("is +inf"));
    CHECK_THROWS_WITH(tiled_attention(huge, Mat{{-1e20f}}, Mat{{5.0f}}, false),
                      "tiled_attention: row 0 of (1, 1) is fully masked: every score it sees is −inf");
    for (std::size_t tile : {1u, 2u}) {  // tile 1: the row's first tile holds only the −inf score
        const Mat out = tiled_attention(huge, down, values, false, tile);
        CHECK(out(0, 0) == 7.0f);
        CHECK(out(0, 0) == attention(huge, down, values).out(0, 0));
    }
}
