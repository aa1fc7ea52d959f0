#include "reference/attention.hpp"

#include <cmath>

#include <xtensor-blas/xlinalg.hpp>

#include "attn/averaging.hpp"
#include "attn/error.hpp"
#include "attn/positions.hpp"
#include "attn/softmax.hpp"

namespace attn::reference {

namespace {
std::string bias_name(const AttentionConfig& c, const std::string& name) { return c.biases ? name : ""; }
std::string output_bias_name(const AttentionConfig& c, const std::string& name) { return c.biases || c.output_bias ? name : ""; }

// rows [b·T, (b+1)·T) and columns [h·width, (h+1)·width): sequence b's slice of head h
auto slice(Mat& m, std::size_t b, std::size_t T, std::size_t h, std::size_t width) {
    return xt::view(m, xt::range(b * T, (b + 1) * T), xt::range(h * width, (h + 1) * width));
}
}  // namespace

// --- SelfAttention --------------------------------------------------------------------------------------------

SelfAttention::SelfAttention(Parameters& params, const std::string& prefix, const AttentionConfig& config, Init init, Rng& rng)
    : c_(config),
      scale_(c_.scale ? 1.0f / std::sqrt(static_cast<float>(c_.d_k)) : 1.0f),
      q_proj_(params, prefix + "W_q", bias_name(c_, prefix + "b_q"), c_.d_model, c_.n_heads * c_.d_k, init_std(init, c_.d_model), rng),
      k_proj_(params, prefix + "W_k", bias_name(c_, prefix + "b_k"), c_.d_model, c_.n_heads * c_.d_k, init_std(init, c_.d_model), rng),
      v_proj_(params, prefix + "W_v", bias_name(c_, prefix + "b_v"), c_.d_model, c_.d_model, init_std(init, c_.d_model), rng) {
    if (c_.output_projection)
        out_proj_.emplace(params, prefix + "W_o", output_bias_name(c_, prefix + "b_o"), c_.d_model, c_.d_model, init_std(init, c_.d_model), rng);
}

Mat SelfAttention::forward(const Mat& x, std::size_t T) {
    const std::size_t B = x.shape(0) / T, H = c_.n_heads, d_k = c_.d_k, d_v = c_.d_model / H;
    require(x.shape(0) == B * T && x.shape(1) == c_.d_model, "SelfAttention::forward",
            "x " + shape_str(x) + " is not (B·T, d_model) with T = " + std::to_string(T) + ", d_model = " + std::to_string(c_.d_model));
    T_ = T;
    q_ = q_proj_.forward(x, T);  // (B·T, h·d_k)
    k_ = k_proj_.forward(x, T);  // (B·T, h·d_k)
    v_ = v_proj_.forward(x, T);  // (B·T, d_model) = (B·T, h·d_v)
    if (c_.positions == Positions::rope) {  // each pair of columns turned by the angle of its position
        const Mat angles = rope_angles(T, d_k);
        rotate_pairs(q_, angles, H, 1.0f);
        rotate_pairs(k_, angles, H, 1.0f);
    }
    const std::vector<double> slopes = c_.positions == Positions::alibi ? alibi_slopes(H) : std::vector<double>();
    weights_ = Tensor3::from_shape({B * H, T, T});
    Mat heads = Mat::from_shape({B * T, c_.d_model});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) {
            const Mat q = slice(q_, b, T, h, d_k), k = slice(k_, b, T, h, d_k), v = slice(v_, b, T, h, d_v);  // (T, d_k), (T, d_v)
            Mat scores = xt::linalg::dot(q, xt::transpose(k)) * scale_;  // (T, T)
            if (!slopes.empty()) scores += alibi_bias(T, slopes[h]);
            const Mat weights = c_.causal ? masked_softmax(scores, causal_mask(T)) : softmax_rows(scores);  // (T, T)
            xt::view(weights_, b * H + h) = weights;
            slice(heads, b, T, h, d_v) = xt::linalg::dot(weights, v);  // (T, d_v)
        }
    return out_proj_ ? out_proj_->forward(heads, T) : heads;  // (B·T, d_model)
}

Mat SelfAttention::backward(const Mat& dy) {
    const std::size_t T = T_, B = q_.shape(0) / T, H = c_.n_heads, d_k = c_.d_k, d_v = c_.d_model / H;
    Mat dheads = out_proj_ ? out_proj_->backward(dy) : dy;  // (B·T, d_model)
    Mat dq = Mat::from_shape(q_.shape()), dk = Mat::from_shape(k_.shape()), dv = Mat::from_shape(v_.shape());
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) {
            const Mat q = slice(q_, b, T, h, d_k), k = slice(k_, b, T, h, d_k), v = slice(v_, b, T, h, d_v);
            const Mat weights = xt::view(weights_, b * H + h);  // (T, T)
            const Mat dhead = slice(dheads, b, T, h, d_v);     // (T, d_v)
            slice(dv, b, T, h, d_v) = xt::linalg::dot(xt::transpose(weights), dhead);
            const Mat dweights = xt::linalg::dot(dhead, xt::transpose(v));  // (T, T)
            // through the softmax, row by row: ds = w ⊙ (dw − Σ_j dw_j w_j); a masked weight is 0, so is its ds
            const Mat row_dots = xt::sum(dweights * weights, {1}, xt::keep_dims);  // (T, 1), evaluated before use
            const Mat dscores = weights * (dweights - row_dots) * scale_;          // (T, T)
            slice(dq, b, T, h, d_k) = xt::linalg::dot(dscores, k);
            slice(dk, b, T, h, d_k) = xt::linalg::dot(xt::transpose(dscores), q);
        }
    if (c_.positions == Positions::rope) {  // q = R q₀, so dq₀ = Rᵀ dq: turn back
        const Mat angles = rope_angles(T, d_k);
        rotate_pairs(dq, angles, H, -1.0f);
        rotate_pairs(dk, angles, H, -1.0f);
    }
    return q_proj_.backward(dq) + k_proj_.backward(dk) + v_proj_.backward(dv);  // x fed all three
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
        xt::view(mixed, rows, xt::all()) = xt::linalg::dot(A, Mat(xt::view(v, rows, xt::all())));
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
        xt::view(dv, rows, xt::all()) = xt::linalg::dot(xt::transpose(A), Mat(xt::view(dmixed, rows, xt::all())));
    }
    return v_proj_.backward(dv);
}

}  // namespace attn::reference
