// Issue 12: the training step's fast paths give the very bits of their plain references, on any number of
// threads. Attention reads each (sequence, head) in place and skips the masked blocks of causal products;
// the reference splits the heads (split_heads), forms every full (T, T) product (bmm), masks with
// masked_softmax and merges back. LayerNorm's gain/bias sums, the cross-entropy written over its
// probabilities (the readout's bias added in its pass, its gradient summed in the backward's), the fused
// bias + GELU (whose slope the backward reuses) and the residual sum against the unfused layers. Shapes
// include T that is not a multiple of the 32-row block, one and three heads, and d_k ≠ d_v.
#include <catch2/catch.hpp>

#include <cstring>
#include <sstream>
#include <string>

#include "attn/layers.hpp"
#include "attn/matmul.hpp"
#include "attn/multi_head.hpp"
#include "attn/params.hpp"
#include "attn/positions.hpp"
#include "attn/rng.hpp"
#include "attn/softmax.hpp"

using namespace attn;

namespace {

struct Plain {
    Mat out, dq, dk, dv;
};

// Definition 9.1 per head, the long way: full products, masked_softmax, softmax_rows_backward.
Plain plain_attention(const Mat& q, const Mat& k, const Mat& v, const Mat& dout, std::size_t B, std::size_t T, std::size_t h,
                      const AttentionOptions& o) {
    const Tensor3 qh = split_heads(q, B, T, h), kh = split_heads(k, B, T, h), vh = split_heads(v, B, T, h),
                  douth = split_heads(dout, B, T, h);
    const float scale = o.scale ? 1.0f / std::sqrt(static_cast<float>(qh.shape(2))) : 1.0f;
    Tensor3 scores = bmm_nt(qh, kh);
    Tensor3 w = Tensor3::from_shape(scores.shape());
    if (o.causal && !o.bias) {  // the training path's fused scale, mask and softmax, on every full row
        causal_softmax(scores.data(), w.data(), B * h, T, scale);
    } else {
        if (o.scale) scores *= scale;
        const Mask keep = o.causal ? causal_mask(T) : Mask(xt::ones<bool>({T, T}));
        for (std::size_t i = 0; i < B * h; ++i) {
            Mat s = xt::view(scores, i);
            if (o.bias) s += xt::view(*o.bias, i % h);
            xt::view(w, i) = masked_softmax(s, keep);
        }
    }
    Plain p;
    p.out = merge_heads(bmm(w, vh), B, T, h);
    p.dv = merge_heads(bmm_tn(w, douth), B, T, h);
    const Tensor3 dw = bmm_nt(douth, vh);
    Tensor3 ds = Tensor3::from_shape(dw.shape());
    softmax_rows_backward(w.data(), dw.data(), ds.data(), B * h * T, T);
    if (scale != 1.0f) ds *= scale;
    p.dq = merge_heads(bmm(ds, kh), B, T, h);
    p.dk = merge_heads(bmm_tn(ds, qh), B, T, h);
    return p;
}

bool same_bits(const Mat& a, const Mat& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

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

}  // namespace

TEST_CASE("attention on heads in place, causal blocks skipped, any thread count: the plain per-head products' bits",
          "[attention][threads]") {
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
                AttentionOptions options;
            };
            for (const Case& c : {Case{"causal", {}}, Case{"no mask", {.causal = false}}, Case{"no division", {.scale = false}},
                                  Case{"ALiBi", {.bias = &alibi}}}) {
                const Plain want = plain_attention(q, k, v, dout, B, T, h, c.options);
                for (const int threads : {1, 2}) {
                    CAPTURE(T, h, c.name, threads);
                    fix_blas_threads(threads);
                    AttentionCache cache;
                    const Mat out = causal_attention_forward(q, k, v, B, T, h, cache, c.options);
                    Mat dq, dk_, dv_;
                    causal_attention_backward(dout, cache, B, T, h, dq, dk_, dv_);
                    fix_blas_threads(0);
                    INFO("out: first difference at " << first_difference(out, want.out));
                    CHECK(same_bits(out, want.out));
                    INFO("dq: first difference at " << first_difference(dq, want.dq));
                    CHECK(same_bits(dq, want.dq));
                    INFO("dk: first difference at " << first_difference(dk_, want.dk));
                    CHECK(same_bits(dk_, want.dk));
                    INFO("dv: first difference at " << first_difference(dv_, want.dv));
                    CHECK(same_bits(dv_, want.dv));
                }
            }
        }
    }
}

TEST_CASE("LayerNorm, cross-entropy (with the readout bias and its sums), bias + GELU with its slope and the residual sum on 1 and 2 threads: the plain loops' bits", "[layers][threads]") {
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
    const Mat gelu_ref = gelu_forward(pre_ref);  // the vectorised GELU, itself held to std::erf in test_vmath.cpp
    const Mat slope_ref = gelu_backward(pre_ref, xt::ones<float>({N, V}));  // 1 · (Φ + x φ) is the slope's float
    const Mat dgelu_in = rng.normal_mat(N, V), dgelu_ref = gelu_backward(pre_ref, dgelu_in);
    const CrossEntropy ce_ref = cross_entropy_forward(logits, targets);
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
    const CrossEntropy ce_biased_ref = cross_entropy_forward(biased_ref, targets);
    const Mat sum_ref = x + dy;

    for (const int threads : {1, 2}) {
        CAPTURE(threads);
        fix_blas_threads(threads);
        gain.grad.fill(0), bias.grad.fill(0);
        LayerNormCache cache;
        const Mat y = layernorm_forward(x, gain, bias, cache);
        const Mat dx = layernorm_backward(dy, cache, gain, bias);
        Mat pre = logits;
        const Mat g = bias_gelu_forward(pre, b1);
        const Mat dgelu = gelu_backward_from_slope(pre, dgelu_in);
        CrossEntropy ce = cross_entropy_forward(logits, targets);
        const Mat dlogits = cross_entropy_backward(std::move(ce), targets);
        Mat biased = logits;
        const CrossEntropy ce_biased = bias_cross_entropy_forward(biased, b_out, targets);
        Mat sum = x;
        add_in_place(sum, dy);
        b_out.grad = b_out_grad_start;
        const Mat dlogits_summed = cross_entropy_backward(cross_entropy_forward(logits, targets), targets, &b_out);
        fix_blas_threads(0);
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
