// Section 9.8, the n² wall and FlashAttention: the online softmax against a plain softmax-weighted sum,
// the tiled causal attention against the materialised one (causal_attention_forward), its causal mask
// at the tile boundary, its errors, and the peak-memory measurement that shows it never holds T × T.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../spec.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/rng.hpp"
#include "fast/flash.hpp"
#include "fast/multi_head.hpp"
#include "math/online_softmax.hpp"
#include "math/stats.hpp"

using namespace attn;
using Catch::Matchers::Contains;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

Mat materialised(const Mat& q, const Mat& k, const Mat& v, std::size_t B, std::size_t T, std::size_t n_heads) {
    fast::AttentionCache cache;
    return fast::causal_attention_forward(q, k, v, B, T, n_heads, cache);
}

using spec::same_bits;

// Outputs are softmax-weighted averages of N(0, 1) values (|out| ≲ 3); the two methods sum in different
// orders and the fast path's exp differs from std::exp by up to 2 ulps (test_vmath.cpp): fp32 noise is ~1e-6.
constexpr double fp32_noise = 2e-5;

// AddressSanitizer keeps one shadow byte per 8 bytes allocated and writes it on allocation, so even an
// allocation that is never touched makes an eighth of its size resident.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t asan_shadow_of_64mb = (64u << 20) / 8;
#else
constexpr std::size_t asan_shadow_of_64mb = 0;
#endif

struct Shape {
    std::size_t B, T, n_heads, d_head, tile;
};

}  // namespace

TEST_CASE("tiled causal attention equals the materialised one on chosen and random shapes", "[flash]") {
    std::vector<Shape> shapes = {
        {1, 1, 1, 4, 1},     // one token
        {1, 37, 1, 8, 1},    // tile = 1: every tile is one row and one key
        {1, 37, 2, 8, 64},   // tile > T: one tile, the diagonal one
        {1, 100, 1, 16, 32}, // T not a multiple of the tile, one head
        {3, 50, 4, 4, 16},   // B > 1, several heads
        {2, 64, 2, 8, 16},   // T a multiple of the tile
        {1, 9, 3, 5, 8},     // T = tile + 1
    };
    Rng rng(81);
    for (int trial = 0; trial < 12; ++trial)  // random shapes
        shapes.push_back({1 + rng.below(3), 1 + rng.below(90), 1 + rng.below(4), 1 + rng.below(12), 1 + rng.below(40)});
    for (const Shape& s : shapes) {
        const std::size_t d_model = s.n_heads * s.d_head;
        const Mat q = rng.normal_mat(s.B * s.T, d_model), k = rng.normal_mat(s.B * s.T, d_model),
                  v = rng.normal_mat(s.B * s.T, d_model);
        const Mat expected = materialised(q, k, v, s.B, s.T, s.n_heads);
        INFO("B " << s.B << ", T " << s.T << ", n_heads " << s.n_heads << ", d_head " << s.d_head << ", tile " << s.tile);
        const Mat fast = fast::tiled_causal_attention(q, k, v, s.B, s.T, s.n_heads, s.tile);
        const Mat reference = fast::tiled_causal_attention(q, k, v, s.B, s.T, s.n_heads, s.tile, false);
        REQUIRE(fast.shape() == expected.shape());
        CHECK(max_abs_diff(fast, expected) < fp32_noise);
        CHECK(max_abs_diff(reference, expected) < fp32_noise);
    }
}

TEST_CASE("tiled attention is bit-identical run to run and for any number of threads", "[flash]") {
    Rng rng(82);
    const std::size_t B = 2, T = 300, n_heads = 4, d_model = 64;
    const Mat q = rng.normal_mat(B * T, d_model), k = rng.normal_mat(B * T, d_model), v = rng.normal_mat(B * T, d_model);
    const Mat one = fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32, true, 1);
    CHECK(same_bits(one, fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32, true, 1)));
    CHECK(same_bits(one, fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32, true, 2)));
    CHECK(same_bits(one, fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32, true, 3)));
    CHECK(same_bits(one, fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32)));  // automatic thread count
    const Mat ref = fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32, false, 1);
    CHECK(same_bits(ref, fast::tiled_causal_attention(q, k, v, B, T, n_heads, 32, false, 3)));
    CHECK(max_abs_diff(one, ref) < fp32_noise);  // fast and reference: the same recurrence
}

TEST_CASE("the causal mask at the tile boundary: a key changes exactly the rows at or after it", "[flash]") {
    // A mask off by one either way fails here: let in key t + 1 and row t changes when that key's value
    // does; leave out the diagonal key and row j does not change when v_j does. T = tile + 1 and
    // 2·tile + 1 put a lone row in the last query tile, where the diagonal tile is one key wide.
    Rng rng(83);
    for (const auto& [T, tile] : std::vector<std::pair<std::size_t, std::size_t>>{{9, 8}, {17, 8}, {65, 64}, {9, 4}}) {
        const std::size_t n_heads = 2, d_model = 16;
        const Mat q = rng.normal_mat(T, d_model), k = rng.normal_mat(T, d_model), v = rng.normal_mat(T, d_model);
        for (bool fast : {true, false}) {
            const Mat base = fast::tiled_causal_attention(q, k, v, 1, T, n_heads, tile, fast);
            CHECK(max_abs_diff(base, materialised(q, k, v, 1, T, n_heads)) < fp32_noise);
            for (std::size_t j : {std::size_t{0}, tile - 1, tile, T - 1}) {
                Mat k2 = k, v2 = v;
                for (std::size_t c = 0; c < d_model; ++c) k2(j, c) += 1.0f, v2(j, c) += 10.0f;
                const Mat moved = fast::tiled_causal_attention(q, k2, v2, 1, T, n_heads, tile, fast);
                for (std::size_t t = 0; t < T; ++t) {
                    double change = 0;
                    for (std::size_t c = 0; c < d_model; ++c) change = std::max(change, std::fabs(double(moved(t, c)) - base(t, c)));
                    INFO("T " << T << ", tile " << tile << ", fast " << fast << ": key " << j << ", row " << t);
                    if (t < j)
                        CHECK(change == 0.0);  // a future key: not even rounding may leak through
                    else
                        CHECK(change > 1e-3);  // a past or the same key: its value moved by 10
                }
            }
        }
    }
}

TEST_CASE("online_softmax_update folded tile by tile equals the softmax-weighted sum", "[flash][online_softmax]") {
    Rng rng(84);
    for (int trial = 0; trial < 200; ++trial) {
        const int n = 1 + static_cast<int>(rng.below(40)), d_head = 1 + static_cast<int>(rng.below(6));
        const int tile = 1 + static_cast<int>(rng.below(12));
        Vec s = rng.normal_vec(static_cast<std::size_t>(n));
        for (auto& x : s) x *= 4.0f;  // scores spread over e^±12: the running max moves
        for (auto& x : s)
            if (rng.uniform() < 0.2) x = -inf;  // masked entries count for nothing
        if (trial % 3 == 0 && n > tile)        // one tile entirely −∞: it must change nothing
            for (int j = 0; j < tile; ++j) s(static_cast<std::size_t>(j)) = -inf;
        s(static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(n)))) = static_cast<float>(rng.normal());  // ≥ 1 key
        const Mat v = rng.normal_mat(static_cast<std::size_t>(n), static_cast<std::size_t>(d_head));

        std::vector<float> acc(static_cast<std::size_t>(d_head), 0.0f), out(static_cast<std::size_t>(d_head));
        OnlineSoftmax state = online_softmax_start();
        for (int j0 = 0; j0 < n; j0 += tile) {
            const int len = std::min(tile, n - j0);
            state = online_softmax_update(state, s.data() + j0, len, v.data() + j0 * d_head, d_head, acc.data(), d_head);
        }
        online_softmax_finish(state, acc.data(), out.data(), d_head);

        // The plain computation in double: weights = softmax(s) over the finite entries, out = Σ w_j v_j.
        const Vec w = spec::softmax(s);
        double m = -inf, l = 0;
        for (float x : s) m = std::max(m, double(x));
        for (float x : s) l += std::exp(double(x) - m);
        INFO("trial " << trial << ", n " << n << ", tile " << tile);
        CHECK(state.m == static_cast<float>(m));
        CHECK(std::fabs(state.l - l) < 1e-5 * l);
        for (int c = 0; c < d_head; ++c) {
            double expected = 0;
            for (int j = 0; j < n; ++j) expected += double(w(static_cast<std::size_t>(j))) * v(static_cast<std::size_t>(j), static_cast<std::size_t>(c));
            CHECK(std::fabs(out[static_cast<std::size_t>(c)] - expected) < 1e-5);
        }
    }
}

TEST_CASE("online_softmax_update: an all −∞ tile changes nothing — a much larger later score takes over", "[flash][online_softmax]") {
    const float v[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    float acc[2] = {0, 0};
    OnlineSoftmax st = online_softmax_start();
    const float masked[2] = {-inf, -inf};
    st = online_softmax_update(st, masked, 2, &v[0][0], 2, acc, 2);  // first tile fully masked
    CHECK(st.m == -inf);
    CHECK(st.l == 0.0f);
    CHECK((acc[0] == 0.0f && acc[1] == 0.0f));
    const float first[1] = {0.0f};
    st = online_softmax_update(st, first, 1, &v[1][0], 2, acc, 2);
    CHECK((st.m == 0.0f && st.l == 1.0f && acc[0] == 3.0f && acc[1] == 4.0f));
    st = online_softmax_update(st, masked, 2, &v[0][0], 2, acc, 2);  // a masked tile later on
    CHECK((st.m == 0.0f && st.l == 1.0f && acc[0] == 3.0f && acc[1] == 4.0f));
    const float big[1] = {200.0f};  // exp(200) overflows fp32: only the running max keeps this finite
    st = online_softmax_update(st, big, 1, &v[2][0], 2, acc, 2);
    float out[2];
    online_softmax_finish(st, acc, out, 2);
    CHECK(st.m == 200.0f);
    CHECK(st.l == 1.0f);  // 1 · exp(0 − 200) + exp(0) = 1 in fp32
    CHECK((out[0] == 5.0f && out[1] == 6.0f));
}

TEST_CASE("tiled attention refuses bad input, naming the shapes", "[flash][errors]") {
    const Mat x = xt::zeros<float>({8, 6}), y = xt::zeros<float>({7, 6});
    CHECK_THROWS_WITH(fast::tiled_causal_attention(x, x, y, 2, 4, 2),
                      "tiled_causal_attention: q (8, 6), k (8, 6), v (7, 6) must have one shape");
    CHECK_THROWS_WITH(fast::tiled_causal_attention(x, x, x, 3, 4, 2),
                      "tiled_causal_attention: q (8, 6) does not hold B·T = 3·4 = 12 rows");
    CHECK_THROWS_WITH(fast::tiled_causal_attention(x, x, x, 2, 4, 4),
                      "tiled_causal_attention: d_model 6 of q (8, 6) is not divisible by n_heads = 4");
    CHECK_THROWS_WITH(fast::tiled_causal_attention(x, x, x, 2, 4, 0),
                      "tiled_causal_attention: d_model 6 of q (8, 6) is not divisible by n_heads = 0");
    CHECK_THROWS_WITH(fast::tiled_causal_attention(x, x, x, 2, 4, 2, 0), "tiled_causal_attention: tile must be at least 1 (got 0)");
    Mat bad = x;
    bad(3, 1) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(fast::tiled_causal_attention(x, bad, x, 2, 4, 2), Contains("tiled_causal_attention (k)") && Contains("non-finite"));
    const Mat huge = xt::ones<float>({8, 6}) * 1e20f;  // finite, but q·k = 3e40 is not
    CHECK_THROWS_WITH(fast::tiled_causal_attention(huge, huge, x, 2, 4, 2), Contains("overflowed fp32"));
    CHECK(fast::tiled_causal_attention(Mat(xt::zeros<float>({0, 6})), Mat(xt::zeros<float>({0, 6})),
                                 Mat(xt::zeros<float>({0, 6})), 0, 5, 2)
              .shape(0) == 0);
}

TEST_CASE("measure_peak_memory sees 64 MB touched, and not an earlier peak", "[flash][memory]") {
    const std::size_t bytes = 64u << 20;
    const PeakMemory big = measure_peak_memory([&] {
        std::vector<char> block(bytes);  // value-initialised: every page written
        REQUIRE(block[bytes / 2] == 0);
    });
#if defined(__linux__)
    REQUIRE(big.reset);
#endif
    CHECK(big.rise() >= (60u << 20));
    CHECK(big.rise() < (80u << 20));
    // The 64 MB are freed by now; a call that allocates nothing must not report the old peak.
    const PeakMemory none = measure_peak_memory([] {});
    CHECK(none.rise() < (4u << 20));
    // Allocated but never touched: no resident pages, no rise (the method's documented blind spot).
    const PeakMemory untouched = measure_peak_memory([&] {
        const Mat m = Mat::from_shape({4096, 4096});  // 64 MB of address space, no page written
        REQUIRE(m.size() == 4096u * 4096u);
    });
    CHECK(untouched.rise() < (4u << 20) + asan_shadow_of_64mb);
}

TEST_CASE("tiled attention never holds T × T: its peak memory stays far below one scores matrix", "[flash][memory]") {
    Rng rng(85);
    const std::size_t T = 2048, d_model = 64;  // one head: scores (T, T) would be 16 MB
    const Mat q = rng.normal_mat(T, d_model), k = rng.normal_mat(T, d_model), v = rng.normal_mat(T, d_model);
    const double matrix = double(T * T) * sizeof(float);
    Mat tiled_out, mat_out;
    fast::tiled_causal_attention(q, k, v, 1, T, 1, 64);  // warm: OpenBLAS's buffers, the worker threads' arenas
    const PeakMemory tiled = measure_peak_memory([&] { tiled_out = fast::tiled_causal_attention(q, k, v, 1, T, 1, 64); });
    const PeakMemory mat = measure_peak_memory([&] { mat_out = materialised(q, k, v, 1, T, 1); });
    INFO("tiled rise " << tiled.rise() << " B, materialised rise " << mat.rise() << " B, one T x T matrix " << matrix << " B");
    CHECK(double(tiled.rise()) < matrix / 4);  // the output (0.5 MB) and tile buffers
    // scores and weights: the measurement does see T × T (the causal products skip the masked blocks of the
    // scores, whose pages are then never touched: a row of 2048 floats is two pages and every row writes its first,
    // so about three quarters of the scores' pages, and all of the weights)
    CHECK(double(mat.rise()) > 1.5 * matrix);
    CHECK(max_abs_diff(tiled_out, mat_out) < fp32_noise);
}
