#include "attn/multi_head.hpp"

#include <cmath>

#include "attn/averaging.hpp"
#include "attn/error.hpp"
#include "attn/matmul.hpp"
#include "attn/softmax.hpp"
#include "attn/vmath.hpp"

namespace attn {

Tensor3 split_heads(const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads) {
    require(n_heads > 0 && x.shape(1) % n_heads == 0, "split_heads",
            "d_model " + std::to_string(x.shape(1)) + " of x " + shape_str(x) + " is not divisible by n_heads = " +
                std::to_string(n_heads));
    require(x.shape(0) == B * T, "split_heads",
            "x " + shape_str(x) + " does not hold B·T = " + std::to_string(B) + "·" + std::to_string(T) + " rows");
    const std::size_t dh = x.shape(1) / n_heads;
    Tensor3 out = Tensor3::from_shape({B * n_heads, T, dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < dh; ++j) out(b * n_heads + h, t, j) = x(b * T + t, h * dh + j);
    return out;
}

Mat merge_heads(const Tensor3& x, std::size_t B, std::size_t T, std::size_t n_heads) {
    require(x.shape(0) == B * n_heads && x.shape(1) == T, "merge_heads",
            "x " + shape_str(x) + " is not (B·n_heads, T, d_head) for B = " + std::to_string(B) + ", n_heads = " +
                std::to_string(n_heads) + ", T = " + std::to_string(T));
    const std::size_t dh = x.shape(2);
    Mat out = Mat::from_shape({B * T, n_heads * dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < dh; ++j) out(b * T + t, h * dh + j) = x(b * n_heads + h, t, j);
    return out;
}

ATTN_CLONES void causal_softmax(const float* scores, float* weights, std::size_t n_heads,
                                                              std::size_t T, float scale) {
    for (std::size_t r = 0; r < n_heads * T; ++r) {
        const std::size_t t = r % T;  // this row's position: it sees columns 0…t
        const float* s = scores + r * T;
        float* w = weights + r * T;
        const float m = row_max(s, t + 1);  // scale > 0, so the scaled row's max is scale·m
        for (std::size_t j = 0; j <= t; ++j) w[j] = exp_poly(scale * (s[j] - m));
        const float inv = 1.0f / row_sum(w, t + 1);
        for (std::size_t j = 0; j <= t; ++j) w[j] *= inv;
        for (std::size_t j = t + 1; j < T; ++j) w[j] = 0.0f;  // the future: exactly 0, as masked_softmax writes it
    }
}

Mat causal_attention_forward(const Mat& q, const Mat& k, const Mat& v, std::size_t B, std::size_t T,
                             std::size_t n_heads, AttentionCache& cache, const AttentionOptions& options) {
    require(q.shape() == k.shape() && k.shape(0) == v.shape(0), "causal_attention_forward",
            "q " + shape_str(q) + ", k " + shape_str(k) + ", v " + shape_str(v) +
                ": q and k must have one shape, and as many rows as v");
    const bool uniform = options.weights == Weights::uniform, causal = options.causal;
    cache.kind = options.weights;
    cache.v = split_heads(v, B, T, n_heads);  // (B·h, T, d_head)
    if (!uniform) {                           // uniform weights never read q or k
        cache.q = split_heads(q, B, T, n_heads);
        cache.k = split_heads(k, B, T, n_heads);
    }
    const std::size_t BH = B * n_heads;
    if (uniform) {
        // (T, T): softmax of the (causally masked) zero matrix
        const Mat A = causal ? averaging_matrix(T) : Mat(xt::ones<float>({T, T}) / static_cast<float>(T));
        cache.weights = Tensor3::from_shape({BH, T, T});
        for (std::size_t i = 0; i < BH; ++i) xt::view(cache.weights, i) = A;
    } else {
        Tensor3 scores = bmm_nt(cache.q, cache.k);  // (B·h, T, T)
        const std::size_t dh = cache.q.shape(2);
        cache.scale = options.scale ? 1.0f / std::sqrt(static_cast<float>(dh)) : 1.0f;
        if (causal && !options.bias) {  // the training path: scale, mask and softmax in one pass
            cache.weights = Tensor3::from_shape({BH, T, T});
            causal_softmax(scores.data(), cache.weights.data(), BH, T, cache.scale);
            return merge_heads(bmm(cache.weights, cache.v), B, T, n_heads);  // (B·T, d_model)
        }
        if (options.scale) scores *= cache.scale;
        if (options.bias) {
            const Tensor3& bias = *options.bias;
            require(bias.shape(0) == n_heads && bias.shape(1) == T && bias.shape(2) == T, "causal_attention_forward",
                    "score bias " + shape_str(bias) + " is not (n_heads, T, T) = (" + std::to_string(n_heads) + ", " +
                        std::to_string(T) + ", " + std::to_string(T) + ")");
            for (std::size_t i = 0; i < BH; ++i) xt::view(scores, i) += xt::view(bias, i % n_heads);
        }
        const Mask keep = causal ? causal_mask(T) : Mask(xt::ones<bool>({T, T}));
        cache.weights = Tensor3::from_shape({BH, T, T});
        for (std::size_t i = 0; i < BH; ++i) xt::view(cache.weights, i) = masked_softmax(Mat(xt::view(scores, i)), keep);
    }
    return merge_heads(bmm(cache.weights, cache.v), B, T, n_heads);  // (B·T, d_model)
}

void causal_attention_backward(const Mat& dout, const AttentionCache& cache, std::size_t B, std::size_t T,
                               std::size_t n_heads, Mat& dq, Mat& dk, Mat& dv) {
    const Tensor3 dout_h = split_heads(dout, B, T, n_heads);  // (B·h, T, d_head)
    dv = merge_heads(bmm_tn(cache.weights, dout_h), B, T, n_heads);  // dv = wᵀ dout
    if (cache.kind == Weights::uniform) {
        dq = xt::zeros<float>(dout.shape());
        dk = xt::zeros<float>(dout.shape());
        return;
    }
    const Tensor3 dw = bmm_nt(dout_h, cache.v);  // (B·h, T, T): dw = dout vᵀ
    Tensor3 ds = Tensor3::from_shape(dw.shape());
    softmax_rows_backward(cache.weights.data(), dw.data(), ds.data(), dw.shape(0) * T, T);  // masked: w = 0 → ds = 0
    if (cache.scale != 1.0f) ds *= cache.scale;
    dq = merge_heads(bmm(ds, cache.k), B, T, n_heads);     // dq = ds k / √d_head (without the division: ds k)
    dk = merge_heads(bmm_tn(ds, cache.q), B, T, n_heads);  // dk = dsᵀ q / √d_head
}

}  // namespace attn
