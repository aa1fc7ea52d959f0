// The training step's fast paths against their plain references, on any number of threads.
//
// Attention reads each (sequence, head) in place and skips the masked blocks of causal products; the reference
// splits the heads (split_heads), forms every full (T, T) product (bmm), masks with masked_softmax and merges
// back. Both are correct fp32 computations of the same sums, but OpenBLAS's kernels may take another way
// through a sum of other length or layout (the AVX2 kernels do; the AVX-512 ones happened not to): they agree
// within a bound derived from fp32's rounding (rounding_bound, below), not bit for bit. That bound is tight
// enough that the mistakes a fast path could make (the future visible, the 1/√d_k missing, a block of keys
// skipped) land far outside it, and the test checks that they do. What must be bit for bit is the fast path on
// one thread and on two: the same calls, shared out differently.
//
// LayerNorm's gain/bias sums, the cross-entropy written over its probabilities (the readout's bias added in its
// pass, its gradient summed in the backward's), the fused bias + GELU (whose slope the backward reuses) and
// the residual sum call no BLAS: each float is computed by the same operations in the same order as its plain
// loop, on any machine, so those are held to the plain loops' bits. Shapes include T that is not a multiple of
// the 32-row block, one and three heads, and d_k ≠ d_v.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

#include "../spec.hpp"
#include "batched.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "fast/matmul.hpp"
#include "fast/multi_head.hpp"
#include "math/positions.hpp"
#include "math/softmax.hpp"

using namespace attn;

namespace {

struct Plain {
    Mat out, dq, dk, dv;
    Tensor3 w;  // (B·h, T, T): the weights, which the rounding bound reads
};

// Definition 9.1 per head, the long way: full products, masked_softmax, softmax_rows_backward. `keep`, when
// given, replaces the options' mask (a planted mistake).
Plain plain_attention(const Mat& q, const Mat& k, const Mat& v, const Mat& dout, std::size_t B, std::size_t T, std::size_t h,
                      const fast::AttentionOptions& o, const Mask* keep_instead = nullptr) {
    const Tensor3 qh = split_heads(q, B, T, h), kh = split_heads(k, B, T, h), vh = split_heads(v, B, T, h),
                  douth = split_heads(dout, B, T, h);
    const float scale = o.scale ? 1.0f / std::sqrt(static_cast<float>(qh.shape(2))) : 1.0f;
    Tensor3 scores = fast::bmm_nt(qh, kh);
    Tensor3 w = Tensor3::from_shape(scores.shape());
    if (o.causal && !o.bias && !keep_instead) {  // the training path's fused scale, mask and softmax, on every full row
        fast::causal_softmax(scores.data(), w.data(), B * h, T, scale);
    } else {
        if (o.scale) scores *= scale;
        const Mask keep = keep_instead ? *keep_instead : o.causal ? causal_mask(T) : Mask(xt::ones<bool>({T, T}));
        for (std::size_t i = 0; i < B * h; ++i) {
            Mat s = xt::view(scores, i);
            if (o.bias) s += xt::view(*o.bias, i % h);
            xt::view(w, i) = masked_softmax(s, keep);
        }
    }
    Plain p;
    p.out = merge_heads(batched::bmm(w, vh), B, T, h);
    p.dv = merge_heads(batched::bmm_tn(w, douth), B, T, h);
    const Tensor3 dw = fast::bmm_nt(douth, vh);
    Tensor3 ds = Tensor3::from_shape(dw.shape());
    softmax_rows_backward(w.data(), dw.data(), ds.data(), B * h * T, T);
    if (scale != 1.0f) ds *= scale;
    p.dq = merge_heads(batched::bmm(ds, kh), B, T, h);
    p.dk = merge_heads(batched::bmm_tn(ds, qh), B, T, h);
    p.w = std::move(w);
    return p;
}

// How far apart two correct fp32 computations of attention may lie when their sums take different orders.
// A sum of n products computed in any order is off its exact value by at most γ_n = n·u·(1 + O(nu)) times the
// sum of the |products| (u = 2⁻²⁴, fp32's unit roundoff), so two such sums differ by at most 2γ_n times it.
// Carried through the chain, first order, with w the weights (both computations round the same softmax of
// nearly the same scores):
//   scores    |Δs_tj| ≤ ε_t = 2(d_k + 2)u · max_j (scale·Σ|q_t||k_j| + |bias_tj|)   (the product, the scale, the bias)
//   weights   |Δw_tj| ≤ ρ_t w_tj,  ρ_t = 3ε_t + (2T + 10)u                        (e^{2ε} − 1 ≤ 3ε; exp, sum, divide)
//   out, dv   ρ_t w|v| + 2(T + 1)u w|v|, and likewise wᵀ|dout|
//   dw        D = |dout||v|ᵀ, |Δdw| ≤ E = 2(d_v + 1)u D;  r_t = Σ_j w dw, |Δr_t| ≤ Σ_j w(ρD + E) + 2(T + 1)u Σ_j wD
//   ds        scale·w(dw − r): |Δds| ≤ scale·w·(ρ(D + R) + E + ΔR + 4u(D + R))
//   dq, dk    Σ|Δds||k| + 2(T + 1)u Σ|ds||k|, and likewise with q
// The test allows twice that (the second-order terms left out are far smaller).
Plain rounding_bound(const Mat& q, const Mat& k, const Mat& v, const Mat& dout, std::size_t B, std::size_t T, std::size_t h,
                     const fast::AttentionOptions& o, const Tensor3& w) {
    const Tensor3 qh = split_heads(q, B, T, h), kh = split_heads(k, B, T, h), vh = split_heads(v, B, T, h),
                  douth = split_heads(dout, B, T, h);
    const std::size_t dk = qh.shape(2), dv = vh.shape(2);
    const double u = 0x1p-24, scale = o.scale ? 1.0 / std::sqrt(static_cast<double>(dk)) : 1.0, gT = 2.0 * static_cast<double>(T + 1) * u;
    Tensor3 out = xt::zeros<float>({B * h, T, dv}), dvb = xt::zeros<float>({B * h, T, dv}), dq = xt::zeros<float>({B * h, T, dk}),
            dkb = xt::zeros<float>({B * h, T, dk});
    for (std::size_t n = 0; n < B * h; ++n) {
        std::vector<double> rho(T), R(T, 0.0), dR(T, 0.0);
        xt::xtensor<double, 2> D = xt::zeros<double>({T, T}), S = xt::zeros<double>({T, T}), dS = xt::zeros<double>({T, T});
        for (std::size_t t = 0; t < T; ++t) {
            double worst = 0;
            for (std::size_t j = 0; j < T; ++j) {
                double a = 0, d = 0;
                for (std::size_t i = 0; i < dk; ++i) a += std::fabs(qh(n, t, i) * kh(n, j, i));
                for (std::size_t c = 0; c < dv; ++c) d += std::fabs(douth(n, t, c) * vh(n, j, c));
                D(t, j) = d;
                worst = std::max(worst, scale * a + (o.bias ? std::fabs((*o.bias)(n % h, t, j)) : 0.0));
            }
            const double eps = 2.0 * static_cast<double>(dk + 2) * u * worst;
            rho[t] = 3.0 * eps + static_cast<double>(2 * T + 10) * u;
            for (std::size_t j = 0; j < T; ++j) {
                const double wj = w(n, t, j);
                R[t] += wj * D(t, j);
                dR[t] += wj * (rho[t] * D(t, j) + 2.0 * static_cast<double>(dv + 1) * u * D(t, j)) + gT * wj * D(t, j);
            }
            for (std::size_t j = 0; j < T; ++j) {
                const double wj = w(n, t, j), E = 2.0 * static_cast<double>(dv + 1) * u * D(t, j);
                S(t, j) = scale * wj * (D(t, j) + R[t]);
                dS(t, j) = scale * wj * (rho[t] * (D(t, j) + R[t]) + E + dR[t] + 4.0 * u * (D(t, j) + R[t]));
            }
        }
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < T; ++j) {
                const double wj = w(n, t, j), wo = (rho[t] + gT) * wj;
                for (std::size_t c = 0; c < dv; ++c) {
                    out(n, t, c) += static_cast<float>(wo * std::fabs(vh(n, j, c)));
                    dvb(n, j, c) += static_cast<float>(wo * std::fabs(douth(n, t, c)));
                }
                for (std::size_t i = 0; i < dk; ++i) {
                    dq(n, t, i) += static_cast<float>((dS(t, j) + gT * S(t, j)) * std::fabs(kh(n, j, i)));
                    dkb(n, j, i) += static_cast<float>((dS(t, j) + gT * S(t, j)) * std::fabs(qh(n, t, i)));
                }
            }
    }
    Plain b;
    b.out = 2.0f * merge_heads(out, B, T, h), b.dv = 2.0f * merge_heads(dvb, B, T, h);
    b.dq = 2.0f * merge_heads(dq, B, T, h), b.dk = 2.0f * merge_heads(dkb, B, T, h);
    return b;
}

using spec::same_bits;

std::string hex(float x) {  // every bit shows: 0x1.f5c28fp-3
    std::ostringstream o;
    o << std::hexfloat << x;
    return o.str();
}

// the first entry that differs, for the failure message
std::string first_difference(const Mat& a, const Mat& b) {
    if (a.shape() != b.shape()) return "shapes " + shape_str(a) + " and " + shape_str(b);
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(a.data() + i, b.data() + i, sizeof(float)) != 0)
            return "row " + std::to_string(i / a.shape(1)) + ", column " + std::to_string(i % a.shape(1)) + ": " +
                   hex(a.data()[i]) + " vs " + hex(b.data()[i]);
    return "none";
}

// The first entry where |got − want| exceeds its bound ("" when none does), naming both values and the bound.
std::string beyond_bound(const Mat& got, const Mat& want, const Mat& bound) {
    if (got.shape() != want.shape()) return "shapes " + shape_str(got) + " and " + shape_str(want);
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(got.data()[i]) - want.data()[i]);
        if (!(diff <= bound.data()[i]))
            return "row " + std::to_string(i / got.shape(1)) + ", column " + std::to_string(i % got.shape(1)) + ": " +
                   std::to_string(got.data()[i]) + " vs " + std::to_string(want.data()[i]) + ", |difference| " +
                   std::to_string(diff) + " > bound " + std::to_string(bound.data()[i]);
    }
    return "";
}

}  // namespace

TEST_CASE("attention on heads in place, causal blocks skipped: the plain per-head products within fp32's rounding bound, "
          "the same bits on 1 and 2 threads",
          "[attention][threads][bits]") {
    Rng rng(12);
    for (const std::size_t T : {1, 5, 33, 64, 100}) {
        for (const std::size_t h : {1, 3}) {
            const std::size_t B = 3, dk = 8, dv = 5;  // d_k ≠ d_v
            const Mat q = rng.normal_mat(B * T, h * dk), k = rng.normal_mat(B * T, h * dk), v = rng.normal_mat(B * T, h * dv),
                      dout = rng.normal_mat(B * T, h * dv);
            const std::vector<double> slopes = alibi_slopes(h);
            Tensor3 alibi = Tensor3::from_shape({h, T, T});
            for (std::size_t i = 0; i < h; ++i) xt::view(alibi, i) = alibi_bias(T, slopes[i]);
            struct Case {
                const char* name;
                fast::AttentionOptions options;
            };
            for (const Case& c : {Case{"causal", {}}, Case{"no mask", {.causal = false}}, Case{"no division", {.scale = false}},
                                  Case{"ALiBi", {.bias = &alibi}}}) {
                const Plain want = plain_attention(q, k, v, dout, B, T, h, c.options);
                const Plain bound = rounding_bound(q, k, v, dout, B, T, h, c.options, want.w);
                Plain on_one;
                for (const int threads : {1, 2}) {
                    CAPTURE(T, h, c.name, threads);
                    fast::fix_blas_threads(threads);
                    fast::AttentionCache cache;
                    Plain got;
                    got.out = fast::causal_attention_forward(q, k, v, B, T, h, cache, c.options);
                    fast::causal_attention_backward(dout, cache, B, T, h, got.dq, got.dk, got.dv);
                    fast::fix_blas_threads(0);
                    CHECK(beyond_bound(got.out, want.out, bound.out) == "");
                    CHECK(beyond_bound(got.dq, want.dq, bound.dq) == "");
                    CHECK(beyond_bound(got.dk, want.dk, bound.dk) == "");
                    CHECK(beyond_bound(got.dv, want.dv, bound.dv) == "");
                    if (threads == 1) {
                        on_one = got;
                        continue;
                    }
                    INFO("out, 1 vs 2 threads: first difference at " << first_difference(on_one.out, got.out));
                    CHECK(same_bits(on_one.out, got.out));
                    INFO("dq, 1 vs 2 threads: first difference at " << first_difference(on_one.dq, got.dq));
                    CHECK(same_bits(on_one.dq, got.dq));
                    INFO("dk, 1 vs 2 threads: first difference at " << first_difference(on_one.dk, got.dk));
                    CHECK(same_bits(on_one.dk, got.dk));
                    INFO("dv, 1 vs 2 threads: first difference at " << first_difference(on_one.dv, got.dv));
                    CHECK(same_bits(on_one.dv, got.dv));
                }
            }
        }
    }
}

TEST_CASE("attention's rounding bound still catches a fast path's mistakes: the future visible, the division missing, a "
          "block of keys skipped",
          "[attention][bits]") {
    Rng rng(13);
    const std::size_t B = 2, T = 64, h = 2, dk = 8, dv = 5;
    const Mat q = rng.normal_mat(B * T, h * dk), k = rng.normal_mat(B * T, h * dk), v = rng.normal_mat(B * T, h * dv),
              dout = rng.normal_mat(B * T, h * dv);
    const fast::AttentionOptions causal{};
    const Plain want = plain_attention(q, k, v, dout, B, T, h, causal);
    const Plain bound = rounding_bound(q, k, v, dout, B, T, h, causal, want.w);
    // rows past the first 32-row block do not see keys 0…31, as if the products had skipped that block
    Mask skipped = causal_mask(T);
    for (std::size_t t = 32; t < T; ++t)
        for (std::size_t j = 0; j < 32; ++j) skipped(t, j) = false;
    struct Mistake {
        const char* name;
        Plain got;
    };
    for (const Mistake& m : {Mistake{"the future visible (no mask)", plain_attention(q, k, v, dout, B, T, h, {.causal = false})},
                             Mistake{"the division by √d_k missing", plain_attention(q, k, v, dout, B, T, h, {.scale = false})},
                             Mistake{"a block of keys skipped", plain_attention(q, k, v, dout, B, T, h, causal, &skipped)}}) {
        CAPTURE(m.name);
        CHECK(beyond_bound(m.got.out, want.out, bound.out) != "");
        CHECK(beyond_bound(m.got.dq, want.dq, bound.dq) != "");
        CHECK(beyond_bound(m.got.dk, want.dk, bound.dk) != "");
        CHECK(beyond_bound(m.got.dv, want.dv, bound.dv) != "");
    }
}

TEST_CASE("LayerNorm, cross-entropy (with the readout bias and its sums), bias + GELU with its slope and the residual sum on 1 and 2 threads: the plain loops' bits", "[layers][threads][bits]") {
    Rng rng(3);
    const std::size_t N = 1201, d = 37, V = 1029;  // no vector width divides these; large enough for 2 threads
    Parameters params;
    Param& gain = params.normal("gain", 1, d, 1.0f, rng);
    Param& bias = params.normal("bias", 1, d, 1.0f, rng);
    Param& b1 = params.normal("b_1", 1, V, 1.0f, rng);
    const Mat x = rng.normal_mat(N, d), dy = rng.normal_mat(N, d), logits = rng.normal_mat(N, V) * 4.0f;
    std::vector<int> targets(N);
    for (std::size_t n = 0; n < N; ++n) targets[n] = n % 7 == 3 ? -1 : static_cast<int>(rng.below(V));

    // The plain loops: one row at a time, sums over rows in row order.
    Mat y_ref = Mat::from_shape({N, d}), dx_ref = Mat::from_shape({N, d});
    Mat dgain_ref = xt::zeros<float>({std::size_t{1}, d}), dbias_ref = xt::zeros<float>({std::size_t{1}, d});
    for (std::size_t i = 0; i < N; ++i) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x(i, j);
        mean /= static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
        var /= static_cast<double>(d);
        const float rstd = static_cast<float>(1.0 / std::sqrt(var + 1e-5f));
        float mean_d = 0, mean_dx = 0;
        std::vector<float> xhat(d);
        for (std::size_t j = 0; j < d; ++j) {
            xhat[j] = static_cast<float>(x(i, j) - mean) * rstd;
            y_ref(i, j) = gain.value(0, j) * xhat[j] + bias.value(0, j);
            const float dxhat = dy(i, j) * gain.value(0, j);
            mean_d += dxhat, mean_dx += dxhat * xhat[j];
            dgain_ref(0, j) += dy(i, j) * xhat[j];
            dbias_ref(0, j) += dy(i, j);
        }
        mean_d /= static_cast<float>(d), mean_dx /= static_cast<float>(d);
        for (std::size_t j = 0; j < d; ++j) dx_ref(i, j) = rstd * (dy(i, j) * gain.value(0, j) - mean_d - xhat[j] * mean_dx);
    }
    Mat pre_ref = logits;
    for (std::size_t i = 0; i < N; ++i)
        for (std::size_t j = 0; j < V; ++j) pre_ref(i, j) += b1.value(0, j);
    const Mat gelu_ref = fast::gelu_forward(pre_ref);  // the vectorised GELU, itself held to std::erf in test_vmath.cpp
    const Mat slope_ref = fast::gelu_backward(pre_ref, xt::ones<float>({N, V}));  // 1 · (Φ + x φ) is the slope's float
    const Mat dgelu_in = rng.normal_mat(N, V), dgelu_ref = fast::gelu_backward(pre_ref, dgelu_in);
    const fast::CrossEntropy ce_ref = fast::cross_entropy_forward(logits, targets);
    Mat dlogits_ref = ce_ref.probs;
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t j = 0; j < V; ++j)
            dlogits_ref(n, j) = targets[n] < 0 ? 0.0f : ((j == static_cast<std::size_t>(targets[n]) ? ce_ref.probs(n, j) - 1.0f : ce_ref.probs(n, j)) *
                                                          (1.0f / static_cast<float>(ce_ref.counted)));
    Param& b_out = params.normal("b_out", 1, V, 1.0f, rng);  // its gradient starts non-zero: the sums add to it
    const Mat b_out_grad_start = rng.normal_mat(1, V);
    Mat b_out_grad_ref = b_out_grad_start;
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t j = 0; j < V; ++j) b_out_grad_ref(0, j) += dlogits_ref(n, j);
    Mat biased_ref = logits;  // the readout's bias, then the loss: two passes
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t j = 0; j < V; ++j) biased_ref(n, j) += b_out.value(0, j);
    const fast::CrossEntropy ce_biased_ref = fast::cross_entropy_forward(biased_ref, targets);
    const Mat sum_ref = x + dy;

    for (const int threads : {1, 2}) {
        CAPTURE(threads);
        fast::fix_blas_threads(threads);
        gain.grad.fill(0), bias.grad.fill(0);
        fast::LayerNormCache cache;
        const Mat y = fast::layernorm_forward(x, gain, bias, cache);
        const Mat dx = fast::layernorm_backward(dy, cache, gain, bias);
        Mat pre = logits;
        const Mat g = fast::bias_gelu_forward(pre, b1);
        const Mat dgelu = fast::gelu_backward_from_slope(pre, dgelu_in);
        fast::CrossEntropy ce = fast::cross_entropy_forward(logits, targets);
        const Mat dlogits = fast::cross_entropy_backward(std::move(ce), targets);
        Mat biased = logits;
        const fast::CrossEntropy ce_biased = fast::bias_cross_entropy_forward(biased, b_out, targets);
        Mat sum = x;
        fast::add_in_place(sum, dy);
        b_out.grad = b_out_grad_start;
        const Mat dlogits_summed = fast::cross_entropy_backward(fast::cross_entropy_forward(logits, targets), targets, &b_out);
        fast::fix_blas_threads(0);
        INFO("LayerNorm y: " << first_difference(y, y_ref));
        CHECK(same_bits(y, y_ref));
        INFO("LayerNorm dx: " << first_difference(dx, dx_ref));
        CHECK(same_bits(dx, dx_ref));
        INFO("LayerNorm dgain: " << first_difference(gain.grad, dgain_ref));
        CHECK(same_bits(gain.grad, dgain_ref));
        INFO("LayerNorm dbias: " << first_difference(bias.grad, dbias_ref));
        CHECK(same_bits(bias.grad, dbias_ref));
        INFO("the slope gelu'(pre + b): " << first_difference(pre, slope_ref));
        CHECK(same_bits(pre, slope_ref));
        INFO("dy ⊙ slope against gelu_backward(pre + b, dy): " << first_difference(dgelu, dgelu_ref));
        CHECK(same_bits(dgelu, dgelu_ref));
        INFO("gelu(pre + b): " << first_difference(g, gelu_ref));
        CHECK(same_bits(g, gelu_ref));
        INFO("dlogits: " << first_difference(dlogits, dlogits_ref));
        CHECK(same_bits(dlogits, dlogits_ref));
        INFO("dlogits, the readout bias summed in the same pass: " << first_difference(dlogits_summed, dlogits_ref));
        CHECK(same_bits(dlogits_summed, dlogits_ref));
        INFO("the readout bias's gradient: " << first_difference(b_out.grad, b_out_grad_ref));
        CHECK(same_bits(b_out.grad, b_out_grad_ref));
        INFO("logits + b, added in the loss's pass: " << first_difference(biased, biased_ref));
        CHECK(same_bits(biased, biased_ref));
        INFO("their probabilities: " << first_difference(ce_biased.probs, ce_biased_ref.probs));
        CHECK(same_bits(ce_biased.probs, ce_biased_ref.probs));
        CHECK(ce_biased.loss == ce_biased_ref.loss);
        INFO("add_in_place: " << first_difference(sum, sum_ref));
        CHECK(same_bits(sum, sum_ref));
    }
}
