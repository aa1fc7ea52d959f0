#include "reference/attention.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/heads.hpp"
#include "math/attention.hpp"
#include "math/averaging.hpp"
#include "math/positions.hpp"
#include "math/softmax.hpp"
#include "reference/matmul.hpp"

namespace attn::reference {

namespace {
std::string bias_name(const AttentionConfig& c, const std::string& name) { return c.biases ? name : ""; }
std::string output_bias_name(const AttentionConfig& c, const std::string& name) { return c.biases || c.output_bias ? name : ""; }

}  // namespace

// --- SelfAttention --------------------------------------------------------------------------------------------

namespace {
// The config with d_k resolved (0 means d_model / n_heads), after checking that the heads divide the width.
AttentionConfig with_d_k(AttentionConfig c) {
    require(c.n_heads > 0 && c.d_model % c.n_heads == 0, "SelfAttention",
            "d_model = " + std::to_string(c.d_model) + " is not divisible by n_heads = " + std::to_string(c.n_heads));
    if (c.d_k == 0) c.d_k = c.d_model / c.n_heads;
    return c;
}
}  // namespace

SelfAttention::SelfAttention(Parameters& params, const std::string& prefix, const AttentionConfig& config, Init init, Rng& rng)
    : c_(with_d_k(config)),
      scale_(c_.scale ? 1.0f / std::sqrt(static_cast<float>(c_.d_k)) : 1.0f),
      q_proj_(params, prefix + "W_q", bias_name(c_, prefix + "b_q"), c_.d_model, c_.n_heads * c_.d_k, init_std(init, c_.d_model), rng),
      k_proj_(params, prefix + "W_k", bias_name(c_, prefix + "b_k"), c_.d_model, c_.n_heads * c_.d_k, init_std(init, c_.d_model), rng),
      v_proj_(params, prefix + "W_v", bias_name(c_, prefix + "b_v"), c_.d_model, c_.d_model, init_std(init, c_.d_model), rng) {
    if (c_.output_projection)
        out_proj_.emplace(params, prefix + "W_o", output_bias_name(c_, prefix + "b_o"), c_.d_model, c_.d_model, init_std(init, c_.d_model), rng);
}

Mat SelfAttention::forward(const Mat& x, std::size_t T) {
    const std::size_t B = x.shape(0) / T, H = c_.n_heads;
    require(x.shape(0) == B * T && x.shape(1) == c_.d_model, "SelfAttention::forward",
            "x " + shape_str(x) + " is not (B·T, d_model) with T = " + std::to_string(T) + ", d_model = " + std::to_string(c_.d_model));
    T_ = T;
    Mat q = q_proj_.forward(x, T);        // (B·T, h·d_k)
    Mat k = k_proj_.forward(x, T);        // (B·T, h·d_k)
    const Mat v = v_proj_.forward(x, T);  // (B·T, d_model) = (B·T, h·d_v)
    if (c_.positions == Positions::rope) {  // each pair of columns turned by the angle of its position
        const Mat angles = rope_angles(T, c_.d_k);
        rotate_pairs(q, angles, H, 1.0f);
        rotate_pairs(k, angles, H, 1.0f);
    }
    // one (T, width) matrix per sequence and head: (B·h, T, d_k) and (B·h, T, d_v)
    q_ = split_heads(q, B, T, H), k_ = split_heads(k, B, T, H), v_ = split_heads(v, B, T, H);
    std::vector<Mat> alibi;  // ALiBi's bias of each head, (T, T): −m_h (t − i)
    if (c_.positions == Positions::alibi)
        for (double m : alibi_slopes(H)) alibi.push_back(alibi_bias(T, m));
    const Mask keep = causal_mask(T);  // (T, T): position t sees 0 … t
    weights_ = Tensor3::from_shape({B * H, T, T});
    Tensor3 heads = Tensor3::from_shape(v_.shape());  // (B·h, T, d_v)
    for (std::size_t u = 0; u < B * H; ++u) {          // sequence u / h, head u % h
        const Mat q_u = xt::view(q_, u), k_u = xt::view(k_, u), v_u = xt::view(v_, u);
        // Definition 9.1 (math/attention.hpp, what 02_soft_lookup prints step by step): weights = softmax(q kᵀ / √d_k
        // + ALiBi's bias, masked), head = weights v
        const AttentionSteps a = attention(q_u, k_u, v_u, c_.causal ? &keep : nullptr, c_.scale, alibi.empty() ? nullptr : &alibi[u % H]);
        xt::view(weights_, u) = a.weights;  // (T, T), kept for the backward
        xt::view(heads, u) = a.out;         // (T, d_v)
    }
    const Mat merged = merge_heads(heads, B, T, H);  // (B·T, d_model): the heads side by side
    return out_proj_ ? out_proj_->forward(merged, T) : merged;
}

Mat SelfAttention::backward(const Mat& dy) {
    const std::size_t T = T_, H = c_.n_heads, B = q_.shape(0) / H;
    const Mat dmerged = out_proj_ ? out_proj_->backward(dy) : dy;  // (B·T, d_model)
    const Tensor3 dheads = split_heads(dmerged, B, T, H);          // (B·h, T, d_v)
    Tensor3 dq = Tensor3::from_shape(q_.shape()), dk = Tensor3::from_shape(k_.shape()), dv = Tensor3::from_shape(v_.shape());
    for (std::size_t u = 0; u < B * H; ++u) {
        const Mat q_u = xt::view(q_, u), k_u = xt::view(k_, u), v_u = xt::view(v_, u);
        const Mat weights = xt::view(weights_, u), dhead = xt::view(dheads, u);  // (T, T), (T, d_v)
        xt::view(dv, u) = matmul(transposed(weights), dhead);
        const Mat dweights = matmul(dhead, transposed(v_u));  // (T, T)
        // through the softmax, row by row: ds = w ⊙ (dw − Σ_j dw_j w_j) (math/softmax.hpp; a masked weight is 0, so
        // is its ds), then through the scale
        Mat dscores = Mat::from_shape({T, T});
        softmax_rows_backward(weights.data(), dweights.data(), dscores.data(), T, T);
        dscores *= scale_;
        xt::view(dq, u) = matmul(dscores, k_u);
        xt::view(dk, u) = matmul(transposed(dscores), q_u);
    }
    Mat dq_merged = merge_heads(dq, B, T, H), dk_merged = merge_heads(dk, B, T, H);  // (B·T, h·d_k)
    if (c_.positions == Positions::rope) {  // q = R q₀, so dq₀ = Rᵀ dq: turn back
        const Mat angles = rope_angles(T, c_.d_k);
        rotate_pairs(dq_merged, angles, H, -1.0f);
        rotate_pairs(dk_merged, angles, H, -1.0f);
    }
    return q_proj_.backward(dq_merged) + k_proj_.backward(dk_merged) + v_proj_.backward(merge_heads(dv, B, T, H));  // x fed all three
}

// --- UniformAverage -------------------------------------------------------------------------------------------

UniformAverage::UniformAverage(Parameters& params, const std::string& prefix, const AttentionConfig& config, Init init, Rng& rng)
    : c_(config), v_proj_(params, prefix + "W_v", bias_name(c_, prefix + "b_v"), c_.d_model, c_.d_model, init_std(init, c_.d_model), rng) {
    if (c_.output_projection)
        out_proj_.emplace(params, prefix + "W_o", output_bias_name(c_, prefix + "b_o"), c_.d_model, c_.d_model, init_std(init, c_.d_model), rng);
}

Mat UniformAverage::forward(const Mat& x, std::size_t T) {
    const std::size_t B = x.shape(0) / T;
    require(x.shape(0) == B * T && x.shape(1) == c_.d_model, "UniformAverage::forward",
            "x " + shape_str(x) + " is not (B·T, d_model) with T = " + std::to_string(T) + ", d_model = " + std::to_string(c_.d_model));
    T_ = T;
    // (T, T): row t holds 1/(t+1) over its prefix; without the mask 1/T everywhere
    const Mat A = c_.causal ? averaging_matrix(T) : Mat(xt::ones<float>({T, T}) / static_cast<float>(T));
    weights_ = Tensor3::from_shape({B * c_.n_heads, T, T});
    for (std::size_t u = 0; u < B * c_.n_heads; ++u) xt::view(weights_, u) = A;
    const Mat v = v_proj_.forward(x, T);  // (B·T, d_model)
    Mat mixed = Mat::from_shape(v.shape());
    for (std::size_t b = 0; b < B; ++b) {
        auto rows = xt::range(b * T, (b + 1) * T);
        xt::view(mixed, rows, xt::all()) = matmul(A, Mat(xt::view(v, rows, xt::all())));
    }
    return out_proj_ ? out_proj_->forward(mixed, T) : mixed;
}

Mat UniformAverage::backward(const Mat& dy) {
    const std::size_t T = T_, B = dy.shape(0) / T;
    const Mat dmixed = out_proj_ ? out_proj_->backward(dy) : dy;
    const Mat A = xt::view(weights_, 0);
    Mat dv = Mat::from_shape(dmixed.shape());
    for (std::size_t b = 0; b < B; ++b) {
        auto rows = xt::range(b * T, (b + 1) * T);
        xt::view(dv, rows, xt::all()) = matmul(transposed(A), Mat(xt::view(dmixed, rows, xt::all())));
    }
    return v_proj_.backward(dv);
}

}  // namespace attn::reference
