// Exercises 10.1–10.3 (Sections 9.5–9.8, the block). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "10_block/block.hpp"
#include "attn/rng.hpp"
#include "attn/model.hpp"

TEST_CASE("Exercise 10.1: gpt2_param_count — 12 d² + 13 d per block, a tied output", "[ex10.1][sec10]") {
    CHECK(ex::gpt2_param_count(50257, 1024, 768, 12) == 124439808u);  // GPT-2 small, as published
    // against a model object's tensors, at sizes small enough to build
    for (auto [V, T, d, L] : {std::array<std::size_t, 4>{10, 8, 16, 1}, {37, 5, 32, 3}, {100, 64, 48, 2}}) {
        attn::Model model(attn::gpt2_config({.vocab = V, .max_T = T, .d_model = d, .n_heads = 4, .n_layers = L}), 0);
        INFO("V " << V << ", n_ctx " << T << ", d " << d << ", layers " << L);
        CHECK(ex::gpt2_param_count(V, T, d, L) == model.params().count());
    }
}

TEST_CASE("Exercise 10.2: attention_matrix_bytes — B·h·n²·4", "[ex10.2][sec10]") {
    CHECK(ex::attention_matrix_bytes(1, 8, 128) == 524288u);                // 0.5 MiB: the chapter's first row
    CHECK(ex::attention_matrix_bytes(1, 8, 16384) == 8589934592u);          // 8 GiB: its out-of-memory row
    CHECK(ex::attention_matrix_bytes(3, 2, 5) == 3u * 2 * 25 * 4);
    CHECK(ex::attention_matrix_bytes(2, 8, 2048) == 2 * ex::attention_matrix_bytes(1, 8, 2048));
}

TEST_CASE("Exercise 10.3: online_softmax_tile — tile by tile equals the softmax-weighted sum", "[ex10.3][sec10]") {
    attn::Rng rng(1003);
    const int n = 23, d_head = 5;
    for (int tile : {1, 4, 7, 23, 40}) {
        std::vector<float> s(n), v(static_cast<std::size_t>(n * d_head));
        for (auto& x : s) x = static_cast<float>(rng.normal()) * 3.0f;
        for (auto& x : v) x = static_cast<float>(rng.normal());
        for (int j : {2, 3, 4, 5, 6, 15}) s[static_cast<std::size_t>(j)] = -INFINITY;  // masked keys; with tile 4, all of 4..7 minus 7
        // the plain answer: softmax over the row, then the weighted sum of v
        float m = -INFINITY;
        for (float x : s) m = std::max(m, x);
        double l = 0;
        std::vector<double> want(d_head, 0.0);
        for (int j = 0; j < n; ++j) {
            const double p = std::exp(static_cast<double>(s[static_cast<std::size_t>(j)]) - m);
            l += p;
            for (int i = 0; i < d_head; ++i) want[static_cast<std::size_t>(i)] += p * v[static_cast<std::size_t>(j * d_head + i)];
        }
        attn::OnlineSoftmax state{-INFINITY, 0.0f};
        std::vector<float> acc(d_head, 123.0f);  // garbage: the first tile must wipe it
        for (int j0 = 0; j0 < n; j0 += tile) {
            const int len = std::min(tile, n - j0);
            state = ex::online_softmax_tile(state, s.data() + j0, len, v.data() + j0 * d_head, d_head, acc.data());
        }
        INFO("tile " << tile);
        CHECK(state.m == m);
        CHECK(state.l == Approx(l).epsilon(1e-5));
        for (int i = 0; i < d_head; ++i) CHECK(acc[static_cast<std::size_t>(i)] / state.l == Approx(want[static_cast<std::size_t>(i)] / l).margin(1e-5));
    }
    // a tile with every key masked leaves the state and acc as they were — before and after others
    std::vector<float> masked(3, -INFINITY), v(3 * 2, 1.0f), acc = {0.5f, -0.5f};
    attn::OnlineSoftmax state{-INFINITY, 0.0f};
    state = ex::online_softmax_tile(state, masked.data(), 3, v.data(), 2, acc.data());
    CHECK(state.m == -INFINITY);
    CHECK(state.l == 0.0f);
    CHECK(acc[0] == 0.5f);
    const float s1[2] = {1.0f, 2.0f};
    state = ex::online_softmax_tile(state, s1, 2, v.data(), 2, acc.data());
    const attn::OnlineSoftmax before = state;
    const std::vector<float> acc_before = acc;
    state = ex::online_softmax_tile(state, masked.data(), 3, v.data(), 2, acc.data());
    CHECK(state.m == before.m);
    CHECK(state.l == before.l);
    CHECK(acc == acc_before);
    CHECK(!std::isnan(acc[0]));
}
