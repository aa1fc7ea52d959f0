// Claim C13 — Section 9.3: the scale and the parameters of multi-head attention.
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/matmul.hpp"
#include "attn/model.hpp"
#include "attn/multi_head.hpp"
#include "attn/rng.hpp"
#include "attn/stats.hpp"

using namespace attn;

TEST_CASE("C13: d = 512, h = 8 gives d_k = 64 and scale 8 — W_q, W_k, W_v, W_o hold 4d^2 for every h", "[claims][C13][sec05]") {
    const std::size_t d = 512;
    for (std::size_t h : {1u, 2u, 4u, 8u, 16u}) {
        Model model({.vocab = 1, .max_T = 1, .d_model = d, .n_heads = h, .positions = Positions::none}, 0);
        const std::size_t n = model.params().count({"block0.W_q", "block0.W_k", "block0.W_v", "block0.W_o"});
        INFO("h = " << h);
        CHECK(n == 4 * d * d);
        CHECK(n == 1048576u);
    }
    // Per-head scores of N(0, 1) vectors have variance d_k = 64, so the right divisor is sqrt(64) = 8.
    Rng rng(13);
    const Mat q = rng.normal_mat(128, d), k = rng.normal_mat(128, d);
    const Tensor3 s = bmm_nt(split_heads(q, 1, 128, 8), split_heads(k, 1, 128, 8));  // (8, 128, 128)
    const double var = variance_of(s.data(), s.size());
    CHECK(var / 64 == Approx(1.0).margin(0.05));   // 131,072 scores: sd of the ratio ~0.005
    CHECK(var / 512 < 0.2);                          // dividing by sqrt(512) would flatten them
    // h heads do the products of one full-width head: per query, h · (T · d_k) multiply-adds for q k^T.
    CHECK(8 * (128 * (d / 8)) == 128 * d);
}
