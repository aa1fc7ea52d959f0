// Exercises 10.1–10.3 (Sections 9.5–9.8, the block). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "10_block/block.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "expect.hpp"
#include "fast/model.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Vec;

namespace {
using u64 = std::uint64_t;
// What 32-bit int arithmetic leaves of a count, as it behaves on every machine this runs on: the product
// wraps modulo 2^32, is read as a signed int and widened to std::size_t on return.
double as_int32(u64 exact) { return static_cast<double>(static_cast<std::size_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(exact)))); }

// The parameters of a GPT-2-shaped model, in 64 bits, and with known pieces left out or added.
struct Count {
    bool tied = true, final_norm = true, block_biases = true;
};
u64 params(u64 V, u64 n_ctx, u64 d, u64 L, Count c = {}) {
    const u64 block = 12 * d * d + (c.block_biases ? 13 * d : 0);
    return V * d + n_ctx * d + L * block + (c.final_norm ? 2 * d : 0) + (c.tied ? 0 : V * d);
}

// The count in float, as a learner who wrote 12.0f * d * d would get it: past 2^24 a float keeps 24 bits,
// so GPT-2 XL's 1,557,611,200 rounds to a multiple of 128.
double in_float(u64 V, u64 n_ctx, u64 d, u64 L) {
    const float fd = static_cast<float>(d);
    const float block = 12.0f * fd * fd + 13.0f * fd;
    const float total = static_cast<float>(V * d + n_ctx * d) + static_cast<float>(L) * block + 2.0f * fd;
    return static_cast<double>(static_cast<u64>(total));
}

// The recurrence run over s in tiles, in double, as written or with one known mistake: the final m, l and
// acc / l. acc starts as garbage (123), as in the test.
struct Fold {
    bool rescale_acc = true, rescale_l = true, running_max = true;
};
struct Folded {
    double m, l;
    Vec out;
};
Folded fold(const std::vector<float>& s, const std::vector<float>& v, int d_head, int tile, Fold f = {}) {
    const int n = static_cast<int>(s.size());
    double m = -INFINITY, l = 0;
    std::vector<double> acc(static_cast<std::size_t>(d_head), 123.0);
    for (int j0 = 0; j0 < n; j0 += tile) {
        const int len = std::min(tile, n - j0);
        double m_new = f.running_max ? m : -INFINITY;
        for (int j = j0; j < j0 + len; ++j) m_new = std::max(m_new, static_cast<double>(s[static_cast<std::size_t>(j)]));
        if (m_new == -INFINITY) continue;
        const double c = std::exp(m - m_new);
        if (f.rescale_l) l *= c;
        if (m == -INFINITY)  // the first tile writes acc: the garbage goes, whatever else is wrong
            for (auto& a : acc) a = 0;
        else if (f.rescale_acc)
            for (auto& a : acc) a *= c;
        for (int j = j0; j < j0 + len; ++j) {
            const double p = std::exp(s[static_cast<std::size_t>(j)] - m_new);
            l += p;
            for (int i = 0; i < d_head; ++i) acc[static_cast<std::size_t>(i)] += p * v[static_cast<std::size_t>(j * d_head + i)];
        }
        m = m_new;
    }
    Vec out = Vec::from_shape({static_cast<std::size_t>(d_head)});
    for (int i = 0; i < d_head; ++i) out(static_cast<std::size_t>(i)) = static_cast<float>(acc[static_cast<std::size_t>(i)] / l);
    return {m, l, out};
}
}  // namespace

// Varies: GPT-2 small, GPT-2 XL and a GPT-3 175B shape (counts past int's and float's range); models built
// with V, n_ctx, d and n_layers each changed (10/8/16/1, 37/5/32/3, 100/64/48/2), their tensors counted.
TEST_CASE("Exercise 10.1: gpt2_param_count — the parameters from the shape alone", "[ex10.1][sec10]") {
    struct Size {
        const char* name;
        u64 V, n_ctx, d, L;
    };
    // GPT-2 small as published; GPT-2 XL (1.56 billion: fits an int, not a float's 24 bits); a GPT-3 175B
    // shape, whose n_layers · 12 d² passes int's 2^31 − 1
    for (const Size& s : {Size{"GPT-2 small", 50257, 1024, 768, 12}, Size{"GPT-2 XL", 50257, 1024, 1600, 48},
                          Size{"GPT-3 175B's shape", 50257, 2048, 12288, 96}}) {
        const u64 want = params(s.V, s.n_ctx, s.d, s.L);
        const std::string context = std::string(s.name) + " (V " + std::to_string(s.V) + ", n_ctx " + std::to_string(s.n_ctx) + ", d " +
                                    std::to_string(s.d) + ", " + std::to_string(s.L) + " layers)";
        if (!ex_test::expect_close(static_cast<double>(ex::gpt2_param_count(s.V, s.n_ctx, s.d, s.L)), static_cast<double>(want), 0, context,
                                   {{"int arithmetic (the count wraps past 2^31 − 1)", as_int32(want)},
                                    {"float arithmetic (a float holds 24 bits: the count rounds)", in_float(s.V, s.n_ctx, s.d, s.L)},
                                    {"an untied output layer (V·d parameters more)", static_cast<double>(params(s.V, s.n_ctx, s.d, s.L, {.tied = false}))},
                                    {"leaving out the final LayerNorm (2d)", static_cast<double>(params(s.V, s.n_ctx, s.d, s.L, {.final_norm = false}))},
                                    {"12 d² per block without the 13 d of biases and LayerNorms", static_cast<double>(params(s.V, s.n_ctx, s.d, s.L, {.block_biases = false}))}}))
            return;
    }
    CHECK(ex::gpt2_param_count(50257, 1024, 768, 12) == 124439808u);  // the published figure, whatever the formula above says
    // against a model object's tensors, at sizes small enough to build
    for (auto [V, T, d, L] : {std::array<std::size_t, 4>{10, 8, 16, 1}, {37, 5, 32, 3}, {100, 64, 48, 2}}) {
        attn::fast::Model model(attn::gpt2_config({.vocab = V, .max_T = T, .d_model = d, .n_heads = 4, .n_layers = L}), 0);
        if (!ex_test::expect_close(static_cast<double>(ex::gpt2_param_count(V, T, d, L)), static_cast<double>(model.params().count()), 0,
                                   "a model built with V " + std::to_string(V) + ", n_ctx " + std::to_string(T) + ", d " + std::to_string(d) + ", " +
                                       std::to_string(L) + " layers (its tensors counted)"))
            break;
    }
}

// Varies: B 1..3, h 1..8, n 1..16384 (the 8 GiB row past int's range; a batch of 3 and 2 heads; one of each).
TEST_CASE("Exercise 10.2: attention_matrix_bytes — the n × n matrices of a batch, in fp32", "[ex10.2][sec10]") {
    // the chapter's first row (0.5 MiB), its out-of-memory row (8 GiB: past what an int holds), and small ones
    for (auto [B, h, n] : {std::array<u64, 3>{1, 8, 128}, {1, 8, 16384}, {3, 2, 5}, {2, 8, 2048}, {1, 1, 1}}) {
        const u64 want = B * h * n * n * 4;
        if (!ex_test::expect_close(static_cast<double>(ex::attention_matrix_bytes(B, h, n)), static_cast<double>(want), 0,
                                   "B " + std::to_string(B) + ", h " + std::to_string(h) + ", n " + std::to_string(n),
                                   {{"counting entries, not bytes (the 4 bytes of a float left out)", static_cast<double>(B * h * n * n)},
                                    {"int arithmetic (the product wraps past 2^31 − 1)", as_int32(want)},
                                    {"one head only (h left out)", static_cast<double>(B * n * n * 4)},
                                    {"n entries per sequence and head instead of n²", static_cast<double>(B * h * n * 4)},
                                    {"twice the bytes: 8 per entry (a double, not fp32), or the scores and the weights both counted", static_cast<double>(B * h * n * n * 8)}}))
            break;
    }
}

// Varies: 23 scores (6 masked) in tiles of 1, 4, 7, 23 and 40 (one tile larger than the row), d_head 5, acc
// starting as garbage (finite, then NaN and inf); a fully masked tile first and after others.
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
        const std::string context = "23 scores (6 masked) in tiles of " + std::to_string(tile);
        Vec out = Vec::from_shape({static_cast<std::size_t>(d_head)}), out_want = out;
        for (int i = 0; i < d_head; ++i) {
            out(static_cast<std::size_t>(i)) = acc[static_cast<std::size_t>(i)] / state.l;
            out_want(static_cast<std::size_t>(i)) = static_cast<float>(want[static_cast<std::size_t>(i)] / l);
        }
        const Folded no_acc = fold(s, v, d_head, tile, {.rescale_acc = false}), no_l = fold(s, v, d_head, tile, {.rescale_l = false}),
                     tile_max = fold(s, v, d_head, tile, {.running_max = false});
        const char* no_acc_name = "acc not rescaled by exp(m − m') when the max grows";
        const char* no_l_name = "l not rescaled by exp(m − m') when the max grows";
        const char* tile_max_name = "m' = the tile's max alone, not max(m, the tile's max)";
        if (!ex_test::expect_close(static_cast<double>(state.m), static_cast<double>(m), 0, context + ": the final m", {{tile_max_name, tile_max.m}}) ||
            !ex_test::expect_close(state.l, l, 1e-5, context + ": the final l (Σ exp(s − m))", {{no_l_name, no_l.l}, {tile_max_name, tile_max.l}}) ||
            !ex_test::expect_close(out, out_want, 1e-5, context + ": the output acc / l",
                                   {{no_acc_name, no_acc.out}, {no_l_name, no_l.out}, {tile_max_name, tile_max.out}}))
            break;
    }
    // acc's garbage on the first tile may be any bits: NaN and inf must not survive either (0 · NaN is NaN).
    {
        const float inf = std::numeric_limits<float>::infinity(), qnan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> acc = {qnan, inf}, v1(2 * 2, 1.0f);
        const float s2[2] = {1.0f, 2.0f};
        const attn::OnlineSoftmax st = ex::online_softmax_tile({-INFINITY, 0.0f}, s2, 2, v1.data(), 2, acc.data());
        if (!ex_test::expect_close(Vec{acc[0] / st.l, acc[1] / st.l}, Vec{1.0f, 1.0f}, 1e-6,
                                   "a first tile (1, 2) over value rows of ones, acc starting as (NaN, inf): acc / l",
                                   {{"acc rescaled by c = 0 on the first tile instead of written (0 · NaN garbage stays NaN)", Vec{qnan, qnan}}}))
            return;
    }
    // a tile with every key masked leaves the state and acc as they were — before and after others.
    // Compared as (m, l, acc[0], acc[1]).
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto snapshot = [](attn::OnlineSoftmax st, const std::vector<float>& a) { return Vec{st.m, st.l, a[0], a[1]}; };
    std::vector<float> masked(3, -INFINITY), v(3 * 2, 1.0f), acc = {0.5f, -0.5f};
    attn::OnlineSoftmax state{-INFINITY, 0.0f};
    state = ex::online_softmax_tile(state, masked.data(), 3, v.data(), 2, acc.data());
    if (!ex_test::expect_close(snapshot(state, acc), Vec{-INFINITY, 0.0f, 0.5f, -0.5f}, 0,
                               "a fully masked tile first, (m, l, acc[0], acc[1]) from (−inf, 0, 0.5, −0.5)",
                               {{"no special case for a fully masked tile (exp(−inf − (−inf)) is NaN)", Vec{-INFINITY, nan, nan, nan}}}))
        return;
    const float s1[2] = {1.0f, 2.0f};
    state = ex::online_softmax_tile(state, s1, 2, v.data(), 2, acc.data());
    const Vec before = snapshot(state, acc);
    state = ex::online_softmax_tile(state, masked.data(), 3, v.data(), 2, acc.data());
    ex_test::expect_close(snapshot(state, acc), before, 0, "a fully masked tile after scores (1, 2), (m, l, acc[0], acc[1]) unchanged");
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;
using prop::u128;
std::string u128_str(u128 x) {
    std::string s;
    do s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(x % 10))); while ((x /= 10) != 0);
    return s;
}
}  // namespace

// V up to 2^20, n_ctx up to 2^16, d up to 2^16 and n_layers up to 128 (counts to ~7·10^12, past 2^32 for most
// draws); exact, against V d + n_ctx d + n_layers (12 d² + 13 d) + 2 d in 128-bit integers.
TEST_CASE("Exercise 10.1: gpt2_param_count — property: shapes to 10^12 parameters", "[ex10.1][sec10][property]") {
    prop::check("gpt2_param_count over d up to 2^16, n_layers up to 128", [](prop::Case& c) {
        const std::size_t V = prop::size(1, 1u << 20), n_ctx = prop::size(1, 1u << 16), d = prop::size(1, *rc::gen::element<std::size_t>(64, 1u << 16)),
                          L = prop::size(0, 128);
        c.input = "V = " + std::to_string(V) + ", n_ctx = " + std::to_string(n_ctx) + ", d = " + std::to_string(d) + ", n_layers = " + std::to_string(L);
        const u128 want = u128(V) * d + u128(n_ctx) * d + u128(L) * (12 * u128(d) * d + 13 * u128(d)) + 2 * u128(d);
        return prop::compare_count("gpt2_param_count", ex::gpt2_param_count(V, n_ctx, d, L), static_cast<std::size_t>(want), c.input + " (" + u128_str(want) + ")");
    });
}

// B and h up to 64, n up to 2^20 (n² past 2^32 from n = 65,536); exact, against B h n² · 4 in 128-bit integers.
TEST_CASE("Exercise 10.2: attention_matrix_bytes — property: n² past 2^32", "[ex10.2][sec10][property]") {
    prop::check("attention_matrix_bytes over n up to 2^20", [](prop::Case& c) {
        const std::size_t B = prop::size(0, 64), h = prop::size(0, 64), n = prop::size(0, *rc::gen::element<std::size_t>(1024, 1u << 20));
        c.input = "B = " + std::to_string(B) + ", h = " + std::to_string(h) + ", n = " + std::to_string(n);
        const u128 want = u128(B) * h * n * n * 4;
        return prop::compare_count("attention_matrix_bytes", ex::attention_matrix_bytes(B, h, n), static_cast<std::size_t>(want), c.input);
    });
}

// 1..5 tiles of 1..6 scores each (up to 10^4 in size, −inf for masked keys, whole tiles of −inf), value rows of
// d_head 1..4, acc garbage on the first tile (NaN, ±inf or any number). After each all-−inf tile the state and acc
// are as they were, bit for bit; after the last, m is the largest score and acc / l is softmax(every score) · V
// within 1e-5 of the double oracle, relative to max(1, the largest |value|).
TEST_CASE("Exercise 10.3: online_softmax_tile — property: any tiles, masked keys, garbage, huge scores", "[ex10.3][sec10][property]") {
    const float inf = std::numeric_limits<float>::infinity();
    prop::check("online_softmax_tile over 1..5 tiles of 1..6 scores, d_head 1..4", [&](prop::Case& c) {
        const std::size_t d_head = prop::size(1, 4), tiles = prop::size(1, 5);
        const prop::Range sr = prop::range({1, 100, 1e4}), vr = prop::range({1, 100});
        std::vector<std::vector<float>> s(tiles), v(tiles);
        for (std::size_t t = 0; t < tiles; ++t) {
            const std::size_t n = prop::size(1, 6);
            const bool all_masked = *rc::gen::inRange(0, 4) == 0;
            for (std::size_t j = 0; j < n; ++j) s[t].push_back(all_masked || *rc::gen::inRange(0, 5) == 0 ? -inf : prop::number(sr));
            for (std::size_t j = 0; j < n * d_head; ++j) v[t].push_back(prop::number(vr));
        }
        std::vector<float> acc(d_head);
        for (float& a : acc) a = *rc::gen::element(std::numeric_limits<float>::quiet_NaN(), inf, -inf, 3.0f, -1e30f);
        c.input = "d_head = " + std::to_string(d_head) + ", acc garbage (";
        for (std::size_t i = 0; i < d_head; ++i) c.input += (i ? ", " : "") + prop::num(acc[i]);
        c.input += ")";
        for (std::size_t t = 0; t < tiles; ++t) {
            c.input += "; tile " + std::to_string(t) + ": scores (";
            for (std::size_t j = 0; j < s[t].size(); ++j) c.input += (j ? ", " : "") + prop::num(s[t][j]);
            c.input += "), values (";
            for (std::size_t j = 0; j < v[t].size(); ++j) c.input += (j ? ", " : "") + prop::num(v[t][j]);
            c.input += ")";
        }
        attn::OnlineSoftmax state{-inf, 0.0f};
        for (std::size_t t = 0; t < tiles; ++t) {
            const std::vector<float> before = acc;
            const attn::OnlineSoftmax was = state;
            state = ex::online_softmax_tile(state, s[t].data(), static_cast<int>(s[t].size()), v[t].data(), static_cast<int>(d_head), acc.data());
            bool masked = true;
            for (float x : s[t]) masked = masked && x == -inf;
            if (masked && (std::memcmp(&was, &state, sizeof state) != 0 || std::memcmp(before.data(), acc.data(), d_head * sizeof(float)) != 0))
                return "your online_softmax_tile changes the state or acc on tile " + std::to_string(t) + ", whose scores are all −inf, for " + c.input +
                       "; the contract keeps both as they were (state (" + prop::num(was.m) + ", " + prop::num(was.l) + ") became (" + prop::num(state.m) +
                       ", " + prop::num(state.l) + "))\n[vi] online_softmax_tile của bạn thay đổi trạng thái hoặc acc ở tile " + std::to_string(t) +
                       ", nơi mọi điểm đều là −inf, với " + c.input + "; hợp đồng giữ nguyên cả hai";
        }
        // the oracle: softmax over every finite score, in double
        double m = -INFINITY, sum = 0, vmax = 1;
        for (std::size_t t = 0; t < tiles; ++t)
            for (float x : s[t]) m = std::max(m, static_cast<double>(x));
        if (m == -INFINITY) return std::string();  // every tile masked: checked above, tile by tile
        std::vector<double> out(d_head, 0.0);
        for (std::size_t t = 0; t < tiles; ++t)
            for (std::size_t j = 0; j < s[t].size(); ++j) {
                if (s[t][j] == -inf) continue;
                const double p = std::exp(static_cast<double>(s[t][j]) - m);
                sum += p;
                for (std::size_t i = 0; i < d_head; ++i) {
                    out[i] += p * v[t][j * d_head + i];
                    vmax = std::max(vmax, std::fabs(static_cast<double>(v[t][j * d_head + i])));
                }
            }
        if (state.m != static_cast<float>(m))
            return "your online_softmax_tile ends with m = " + prop::num(state.m) + " for " + c.input + "; expected the largest score, " + prop::num(m) +
                   "\n[vi] online_softmax_tile của bạn kết thúc với m = " + prop::num(state.m) + " với " + c.input + "; đúng là điểm lớn nhất, " + prop::num(m);
        Vec mine = Vec::from_shape({d_head}), want = Vec::from_shape({d_head}), scale = Vec::from_shape({d_head});
        for (std::size_t i = 0; i < d_head; ++i) {
            mine(i) = acc[i] / state.l;
            want(i) = static_cast<float>(out[i] / sum);
            scale(i) = static_cast<float>(vmax);
        }
        return prop::compare("online_softmax_tile's acc / l", mine, want, 1e-5, c.input, {}, &scale);
    });
}
