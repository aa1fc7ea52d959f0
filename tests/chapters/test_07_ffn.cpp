// Claim C21 — Section 9.5: the FFN's share of a block, and attention as the only mixer of positions.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/rng.hpp"
#include "reference/layers.hpp"
#include "reference/model.hpp"

using namespace attn;

TEST_CASE("C21: the FFN (d_ff = 4d) holds two thirds of a block — without attention tokens do not mix", "[claims][C21][sec07]") {
    for (std::size_t d : {64u, 768u}) {
        reference::Model m({.vocab = 2, .max_T = 2, .d_model = d, .n_heads = 1, .d_ff = 4 * d, .positions = Positions::none}, 0);
        const std::size_t att = m.params().count({"block0.W_q", "block0.W_k", "block0.W_v", "block0.W_o"});
        const std::size_t ffn = m.params().count({"block0.W_1", "block0.b_1", "block0.W_2", "block0.b_2"});
        CHECK(att == 4 * d * d);
        CHECK(ffn == 8 * d * d + 5 * d);
        CHECK(static_cast<double>(ffn) / static_cast<double>(att + ffn) == Approx(2.0 / 3).margin(0.01));
    }
    // Without attention each output row depends on its own token only; with attention, later rows change.
    const std::size_t T = 6, V = 12;
    for (Mixer mixer : {Mixer::none, Mixer::learned}) {
        reference::Model m({.vocab = V, .max_T = T, .d_model = 8, .n_heads = 1, .mixer = mixer, .d_ff = 32, .norm = Norm::pre}, 2);
        std::vector<int> tokens = {1, 5, 7, 2, 9, 3}, targets(T, -1);
        targets[0] = 0;
        m.forward(tokens, targets, 1, T);
        const Mat before = m.logits();
        tokens[2] = 11;
        m.forward(tokens, targets, 1, T);
        std::size_t changed = 0;
        for (std::size_t r = 0; r < T; ++r) changed += std::memcmp(&before(r, 0), &m.logits()(r, 0), V * sizeof(float)) != 0;
        INFO("mixer " << static_cast<int>(mixer));
        CHECK(changed == (mixer == Mixer::none ? 1u : T - 2));  // causal attention: positions 2..5 change
    }
}

TEST_CASE("GELU's tanh approximation stays within 1e-3 of the exact GELU", "[gelu][sec07]") {
    Mat x = Mat::from_shape({1, 1201});
    for (std::size_t i = 0; i < 1201; ++i) x(0, i) = -6.0f + 0.01f * static_cast<float>(i);
    const double diff = xt::amax(xt::abs(reference::gelu(x) - reference::gelu_tanh(x)))();
    CHECK(diff < 1e-3);
    CHECK(diff > 1e-5);
}
