// The attention's training kernels (common/gpu/attention_train_kernels.cuh), their real source run on the
// CPU (tests/common/gpu_attention_train_on_cpu.cpp), against the CPU library's gradient-checked
// attn::fast::causal_attention_forward / _backward (fast/multi_head.hpp): the materialised path with every option,
// the flash path (FlashAttention-2) where it applies, the two paths against each other, determinism, and
// the refusals. Shapes are odd on purpose: T = 37 and 70 are not multiples of the 64-row tile nor of the
// warp, d_head 8 and 12 are padded to 16. tests/gpu/test_gpu.cpp runs the same comparisons on a device.
//
// Tolerances: both sides are fp32 and differ only in the order of their sums (warp butterflies and the
// online softmax's rescaling against the CPU's loops; the CPU stand-in of cuBLAS sums in double) and in exp
// (expf against attn::fast::exp_poly), a few ulps each. A sum of n ≤ 70 terms then differs by up to about
// n · 2⁻²⁴ · Σ|terms| ≈ 4e-6 · Σ|terms|, and the entries here are O(1) with Σ|terms| of O(1–10). So
// |gpu − cpu| ≤ 2e-5 + 2e-4·|cpu| (5e-5 for the gradients, whose sums run over two products), while a wrong
// index, mask, scale or missing term moves entries by 1e-2 to 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "../spec.hpp"
#include "attention_train.hpp"
#include "buffer.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "fast/multi_head.hpp"
#include "launch.hpp"
#include "math/positions.hpp"

using attn::Mat;
using attn::Tensor3;
namespace gpu = attn::gpu;

namespace {

struct Case {
    int B = 2, n_heads = 2, T = 37, d_k = 8, d_v = 8;
    bool learned = true, causal = true, scaled = true, alibi = false;
    std::string name() const {
        return "B " + std::to_string(B) + ", h " + std::to_string(n_heads) + ", T " + std::to_string(T) + ", d_k " +
               std::to_string(d_k) + ", d_v " + std::to_string(d_v) + (learned ? "" : ", uniform") +
               (causal ? "" : ", not causal") + (scaled ? "" : ", no scale") + (alibi ? ", ALiBi" : "");
    }
};

// Inputs on the merged (B·T, h·d) layout of the CPU library, and the CPU's results split to (B·h, T, d).
struct Reference {
    Mat q, k, v, dout;                       // merged
    Tensor3 qh, kh, vh, douth;               // split: what the GPU takes
    Tensor3 out, weights, dq, dk, dv;        // the CPU's results, split
    std::vector<double> lse;                 // (B·h·T): log Σ exp(score) over the allowed keys, in double
    std::vector<float> slopes;               // (n_heads), ALiBi
    float scale = 1.0f;
};

Reference reference(const Case& c, std::uint64_t seed) {
    attn::Rng rng(seed);
    Reference r;
    const std::size_t B = c.B, T = c.T, h = c.n_heads, N = B * T;
    r.q = rng.normal_mat(N, h * c.d_k);
    r.k = rng.normal_mat(N, h * c.d_k);
    r.v = rng.normal_mat(N, h * c.d_v);
    r.dout = rng.normal_mat(N, h * c.d_v);
    r.qh = attn::split_heads(r.q, B, T, h);
    r.kh = attn::split_heads(r.k, B, T, h);
    r.vh = attn::split_heads(r.v, B, T, h);
    r.douth = attn::split_heads(r.dout, B, T, h);
    Tensor3 bias = Tensor3::from_shape({h, T, T});
    if (c.alibi) {
        const std::vector<double> m = attn::alibi_slopes(h);
        for (std::size_t j = 0; j < h; ++j) {
            xt::view(bias, j) = attn::alibi_bias(T, m[j]);
            r.slopes.push_back(static_cast<float>(m[j]));
        }
    }
    attn::fast::AttentionOptions options{.weights = c.learned ? attn::fast::Weights::learned : attn::fast::Weights::uniform,
                                   .causal = c.causal, .scale = c.scaled, .bias = c.alibi ? &bias : nullptr};
    attn::fast::AttentionCache cache;
    const Mat out = attn::fast::causal_attention_forward(r.q, r.k, r.v, B, T, h, cache, options);
    Mat dq, dk, dv;
    attn::fast::causal_attention_backward(r.dout, cache, B, T, h, dq, dk, dv);
    r.out = attn::split_heads(out, B, T, h);
    r.weights = cache.weights;
    r.dq = attn::split_heads(dq, B, T, h);
    r.dk = attn::split_heads(dk, B, T, h);
    r.dv = attn::split_heads(dv, B, T, h);
    r.scale = c.scaled ? 1.0f / std::sqrt(static_cast<float>(c.d_k)) : 1.0f;
    for (std::size_t bh = 0; bh < B * h; ++bh)
        for (std::size_t t = 0; t < T; ++t) {
            const std::size_t allowed = c.causal ? t + 1 : T;
            std::vector<double> s(allowed);
            double m = -INFINITY;
            for (std::size_t i = 0; i < allowed; ++i) {
                double dot = 0;
                for (int e = 0; e < c.d_k; ++e) dot += static_cast<double>(r.qh(bh, t, e)) * r.kh(bh, i, e);
                s[i] = r.scale * dot + (c.alibi ? bias(bh % h, t, i) : 0.0);
                m = std::max(m, s[i]);
            }
            double sum = 0;
            for (double x : s) sum += std::exp(x - m);
            r.lse.push_back(m + std::log(sum));
        }
    return r;
}

gpu::AttentionShape shape_of(const Case& c, const float* slopes) {
    gpu::AttentionShape s;
    s.B = c.B;
    s.n_heads = c.n_heads;
    s.T = c.T;
    s.d_k = c.d_k;
    s.d_v = c.d_v;
    s.weighting = c.learned ? gpu::Weighting::learned : gpu::Weighting::uniform;
    s.causal = c.causal;
    s.scale = c.scaled ? 1.0f / std::sqrt(static_cast<float>(c.d_k)) : 1.0f;
    s.alibi_slopes = slopes;
    return s;
}

gpu::DeviceBuffer device(const float* host, std::size_t n, const std::string& what) {
    gpu::DeviceBuffer b(n, what);
    b.upload(host, n);
    return b;
}
gpu::DeviceBuffer poisoned(std::size_t n, const std::string& what) {  // NaN wherever a kernel does not write
    gpu::DeviceBuffer b(n, what);
    b.poison();
    return b;
}
std::vector<float> host(const gpu::DeviceBuffer& b) {
    std::vector<float> x(b.size());
    b.download(x.data(), x.size());
    return x;
}

// What one path computes, downloaded.
struct Result {
    std::vector<float> out, weights_or_lse, dq, dk, dv;
};

Result run_materialised(const Case& c, const Reference& r) {
    const std::size_t BH = static_cast<std::size_t>(c.B) * c.n_heads, T = c.T;
    const gpu::DeviceBuffer q = device(r.qh.data(), r.qh.size(), "q"), k = device(r.kh.data(), r.kh.size(), "k"),
                            v = device(r.vh.data(), r.vh.size(), "v"), dout = device(r.douth.data(), r.douth.size(), "dout");
    const gpu::DeviceBuffer slopes = c.alibi ? device(r.slopes.data(), r.slopes.size(), "slopes") : gpu::DeviceBuffer();
    gpu::DeviceBuffer out = poisoned(r.vh.size(), "out"), weights = poisoned(BH * T * T, "weights"),
                      scratch = poisoned(BH * T * T, "scratch"), dq = poisoned(r.qh.size(), "dq"),
                      dk = poisoned(r.kh.size(), "dk"), dv = poisoned(r.vh.size(), "dv");
    const gpu::AttentionShape s = shape_of(c, c.alibi ? slopes.data() : nullptr);
    gpu::attention_forward_materialised(q.data(), k.data(), v.data(), out.data(), weights.data(), s);
    gpu::attention_backward_materialised(q.data(), k.data(), v.data(), weights.data(), dout.data(), dq.data(), dk.data(),
                                         dv.data(), scratch.data(), s);
    return {host(out), host(weights), host(dq), host(dk), host(dv)};
}

Result run_flash(const Case& c, const Reference& r) {
    const std::size_t BH = static_cast<std::size_t>(c.B) * c.n_heads, T = c.T;
    const gpu::DeviceBuffer q = device(r.qh.data(), r.qh.size(), "q"), k = device(r.kh.data(), r.kh.size(), "k"),
                            v = device(r.vh.data(), r.vh.size(), "v"), dout = device(r.douth.data(), r.douth.size(), "dout");
    const gpu::DeviceBuffer slopes = c.alibi ? device(r.slopes.data(), r.slopes.size(), "slopes") : gpu::DeviceBuffer();
    gpu::DeviceBuffer out = poisoned(r.vh.size(), "out"), lse = poisoned(BH * T, "lse"), delta = poisoned(BH * T, "delta"),
                      dq = poisoned(r.qh.size(), "dq"), dk = poisoned(r.kh.size(), "dk"), dv = poisoned(r.vh.size(), "dv");
    const gpu::AttentionShape s = shape_of(c, c.alibi ? slopes.data() : nullptr);
    gpu::attention_forward_flash(q.data(), k.data(), v.data(), out.data(), lse.data(), s);
    gpu::attention_backward_flash(q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(), dq.data(), dk.data(),
                                  dv.data(), delta.data(), s);
    return {host(out), host(lse), host(dq), host(dk), host(dv)};
}

// Every entry within abs + rel·|ref| (NaN fails); the worst difference is reported.
template <class Ref>
void check_close(const std::string& what, const std::vector<float>& got, const Ref& ref, double abs_tol, double rel_tol) {
    REQUIRE(got.size() == static_cast<std::size_t>(ref.size()));
    double worst = 0;
    std::size_t bad = 0, first_bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double r = static_cast<double>(ref.data()[i]);
        const double diff = std::fabs(static_cast<double>(got[i]) - r);
        if (!(diff <= abs_tol + rel_tol * std::fabs(r))) {
            if (bad++ == 0) first_bad = i;
        }
        if (diff > worst || std::isnan(diff)) worst = diff;
    }
    INFO(what << ": max |diff| " << worst << ", " << bad << " of " << got.size() << " entries out of tolerance (first at "
              << first_bad << ")");
    CHECK(bad == 0);
}

constexpr double kAbs = 2e-5, kRel = 2e-4;           // out, weights, lse (see the header comment)
constexpr double kGradAbs = 5e-5, kGradRel = 2e-4;   // dq, dk, dv

using spec::same_bits;

}  // namespace

TEST_CASE("attention training: launch arithmetic of the flash path and the row kernels", "[gpu-host][gpu-attn-train]") {
    using namespace attn::gpu;
    CHECK(kTrainRowsPerBlock == 4);
    CHECK(train_row_blocks(1) == 1);
    CHECK(train_row_blocks(4) == 1);
    CHECK(train_row_blocks(9) == 3);
    CHECK(flash_tiles(37) == 1);
    CHECK(flash_tiles(64) == 1);
    CHECK(flash_tiles(70) == 2);
    // two padded (64, D + 1) rows per thread, two (64, D) staged tiles, lse and delta: 66,560 B at D = 64 and
    // 132,096 B at D = 128 — over the 48 KiB default (the launch opts in) and within sm_80's 163 KiB.
    CHECK(flash_backward_shared_bytes(16) == (2 * 64 * 17 + 2 * 64 * 16 + 128) * 4);
    CHECK(flash_backward_shared_bytes(128) == 132096);
    CHECK(flash_backward_shared_bytes(128) <= 163 * 1024);
    CHECK(flash_forward_shared_bytes(32) == v3_shared_bytes(32));
    // the backward's accumulated columns per block: all of D up to 64, then halves (two blocks per tile)
    CHECK(flash_backward_columns(16) == 16);
    CHECK(flash_backward_columns(64) == 64);
    CHECK(flash_backward_columns(128) == 64);
    CHECK(flash_backward_blocks_x(70, 64) == 2);
    CHECK(flash_backward_blocks_x(70, 128) == 4);
}

TEST_CASE("attention training, materialised: forward and backward against causal_attention_forward/_backward, every option",
          "[gpu-host][gpu-attn-train]") {
    // Every option at T = 37 (one partial tile, not a multiple of the warp); the default, d_k ≠ d_v and ALiBi
    // without the mask at T = 70 (two tiles, a partial one).
    const std::vector<Case> cases = {
        {.T = 37},                                            // Definition 9.1, causal, 1/√d_k
        {.T = 37, .d_v = 12},                                 // d_k ≠ d_v
        {.T = 37, .learned = false},                          // uniform: 1/(t + 1)
        {.T = 37, .learned = false, .causal = false},         // uniform: 1/T
        {.T = 37, .causal = false},
        {.T = 37, .scaled = false},
        {.T = 37, .alibi = true},
        {.T = 70},
        {.T = 70, .d_k = 12, .d_v = 8, .scaled = false},
        {.T = 70, .d_v = 12, .causal = false, .alibi = true},  // ALiBi's 0 above the diagonal
    };
    std::uint64_t seed = 100;
    for (const Case& c : cases) {
        const Reference r = reference(c, ++seed);
        const Result g = run_materialised(c, r);
        check_close("out, " + c.name(), g.out, r.out, kAbs, kRel);
        check_close("weights, " + c.name(), g.weights_or_lse, r.weights, kAbs, kRel);
        check_close("dq, " + c.name(), g.dq, r.dq, kGradAbs, kGradRel);  // exact zeros for uniform weights
        check_close("dk, " + c.name(), g.dk, r.dk, kGradAbs, kGradRel);
        check_close("dv, " + c.name(), g.dv, r.dv, kGradAbs, kGradRel);
        // The rows sum to 1 and the masked future is exactly 0 (the product weights·v must add nothing from it).
        const std::size_t T = c.T;
        std::size_t bad_rows = 0, nonzero_future = 0;
        for (std::size_t row = 0; row < g.weights_or_lse.size() / T; ++row) {
            double sum = 0;
            for (std::size_t i = 0; i < T; ++i) {
                const float w = g.weights_or_lse[row * T + i];
                sum += w;
                if (c.causal && i > row % T && w != 0.0f) ++nonzero_future;
            }
            bad_rows += !(std::fabs(sum - 1.0) <= 1e-5);  // T ≤ 70 roundings of entries ≤ 1
        }
        INFO(c.name());
        CHECK(bad_rows == 0);
        CHECK(nonzero_future == 0);
    }
}

TEST_CASE("attention training, flash: forward (out, lse) and backward against the CPU and the materialised path",
          "[gpu-host][gpu-attn-train]") {
    const std::vector<Case> cases = {
        {.T = 37},
        {.T = 70, .d_k = 16, .d_v = 16},
        {.T = 70, .scaled = false},
        {.T = 37, .d_k = 16, .d_v = 16, .alibi = true},
        {.T = 70, .alibi = true},
        {.B = 1, .n_heads = 3, .T = 1, .d_k = 12, .d_v = 12},  // one row: weight 1, lse = its score
        {.B = 1, .T = 70, .d_k = 100, .d_v = 100, .alibi = true},  // D = 128: two blocks of 64 columns per tile
    };
    std::uint64_t seed = 200;
    for (const Case& c : cases) {
        const Reference r = reference(c, ++seed);
        const Result f = run_flash(c, r);
        check_close("flash out, " + c.name(), f.out, r.out, kAbs, kRel);
        check_close("flash lse (log Σ exp(score), in double), " + c.name(), f.weights_or_lse, r.lse, kAbs, kRel);
        check_close("flash dq, " + c.name(), f.dq, r.dq, kGradAbs, kGradRel);
        check_close("flash dk, " + c.name(), f.dk, r.dk, kGradAbs, kGradRel);
        check_close("flash dv, " + c.name(), f.dv, r.dv, kGradAbs, kGradRel);
        const Result m = run_materialised(c, r);  // the two GPU paths agree with each other too
        check_close("flash vs materialised out, " + c.name(), f.out, m.out, kAbs, kRel);
        check_close("flash vs materialised dq, " + c.name(), f.dq, m.dq, kGradAbs, kGradRel);
        check_close("flash vs materialised dk, " + c.name(), f.dk, m.dk, kGradAbs, kGradRel);
        check_close("flash vs materialised dv, " + c.name(), f.dv, m.dv, kGradAbs, kGradRel);
    }
}

TEST_CASE("attention training: the same call twice gives the same bits (no atomics, fixed-order sums)",
          "[gpu-host][gpu-attn-train]") {
    const Case c{.n_heads = 1, .T = 70, .alibi = true};
    const Reference r = reference(c, 7);
    const Result f1 = run_flash(c, r), f2 = run_flash(c, r);
    const Result m1 = run_materialised(c, r), m2 = run_materialised(c, r);
    for (const auto& [a, b, what] : {std::tuple{&f1, &f2, "flash"}, std::tuple{&m1, &m2, "materialised"}}) {
        INFO(what);
        CHECK(same_bits(a->out, b->out));
        CHECK(same_bits(a->weights_or_lse, b->weights_or_lse));
        CHECK(same_bits(a->dq, b->dq));
        CHECK(same_bits(a->dk, b->dk));
        CHECK(same_bits(a->dv, b->dv));
    }
}

TEST_CASE("attention training: flash_supports refuses what the flash path cannot do, and the calls say why",
          "[gpu-host][gpu-attn-train][errors]") {
    const Case base;
    gpu::AttentionShape s = shape_of(base, nullptr);
    CHECK(gpu::flash_supports(s));
    s.causal = false;
    CHECK_FALSE(gpu::flash_supports(s));
    s = shape_of(base, nullptr);
    s.weighting = gpu::Weighting::uniform;
    CHECK_FALSE(gpu::flash_supports(s));
    s = shape_of(base, nullptr);
    s.d_v = 12;
    CHECK_FALSE(gpu::flash_supports(s));
    s.d_k = s.d_v = 128;
    CHECK(gpu::flash_supports(s));
    s.d_k = s.d_v = 129;
    CHECK_FALSE(gpu::flash_supports(s));
    s = shape_of(base, nullptr);
    s.T = 0;
    CHECK_FALSE(gpu::flash_supports(s));

    // The refusals name the call, the shape and the rule; nothing is launched, so null pointers never matter.
    s = shape_of(base, nullptr);
    s.causal = false;
    float x = 0;
    CHECK_THROWS_WITH(gpu::attention_forward_flash(&x, &x, &x, &x, &x, s),
                      Catch::Contains("gpu::attention_forward_flash") &&
                          Catch::Contains("(B, n_heads, T, d_k, d_v) = (2, 2, 37, 8, 8)") && Catch::Contains("causal only"));
    s = shape_of(base, nullptr);
    s.d_v = 12;
    CHECK_THROWS_WITH(gpu::attention_backward_flash(&x, &x, &x, &x, &x, &x, &x, &x, &x, &x, s),
                      Catch::Contains("gpu::attention_backward_flash") && Catch::Contains("d_k = d_v"));
    s = shape_of(base, nullptr);
    s.T = 0;
    CHECK_THROWS_AS(gpu::attention_forward_materialised(&x, &x, &x, &x, &x, s), attn::Error);
    CHECK_THROWS_WITH(gpu::attention_forward_materialised(&x, &x, &x, &x, &x, s),
                      Catch::Contains("(2, 2, 0, 8, 8)") && Catch::Contains("every size must be positive"));
    s = shape_of(base, nullptr);
    CHECK_THROWS_WITH(gpu::attention_backward_materialised(&x, &x, &x, &x, &x, &x, &x, &x, nullptr, s),
                      Catch::Contains("gpu::attention_backward_materialised") && Catch::Contains("null"));
}
