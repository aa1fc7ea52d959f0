#include "fast/block.hpp"

#include <cmath>

#include "core/error.hpp"
#include "math/positions.hpp"

namespace attn::fast {

// --- LayerNorm -----------------------------------------------------------------------------------------------

LayerNorm::LayerNorm(Parameters& params, const std::string& name, std::size_t d)
    : gain_(&params.ones(name + ".gain", 1, d)), bias_(&params.zeros(name + ".bias", 1, d)) {}

Mat LayerNorm::forward(const Mat& x) { return layernorm_forward(x, *gain_, *bias_, cache_); }

Mat LayerNorm::backward(const Mat& dy) { return layernorm_backward(dy, cache_, *gain_, *bias_); }

// --- MultiHeadAttention ------------------------------------------------------------------------------------------

MultiHeadAttention::MultiHeadAttention(Parameters& params, const std::string& prefix, const AttentionConfig& config,
                                       Init init, Rng& rng)
    : c_(config) {
    const std::size_t d = c_.d_model;
    require(c_.n_heads > 0 && d % c_.n_heads == 0, "MultiHeadAttention",
            "d_model = " + std::to_string(d) + " is not divisible by n_heads = " + std::to_string(c_.n_heads));
    require(c_.mixer != Mixer::none, "MultiHeadAttention", "mixer = none has no attention to build");
    if (c_.d_k == 0) c_.d_k = d / c_.n_heads;
    const bool rope_or_alibi = c_.positions == Positions::rope || c_.positions == Positions::alibi;
    require(!rope_or_alibi || c_.mixer == Mixer::learned, "MultiHeadAttention",
            std::string(positions_name(c_.positions)) + " positions act on learned scores: they need mixer = attention");
    require(c_.positions != Positions::rope || c_.d_k % 2 == 0, "MultiHeadAttention",
            "RoPE rotates pairs: d_k = " + std::to_string(c_.d_k) + " must be even");
    const float s = init_std(init, d);
    auto bias = [&](const std::string& name, std::size_t n) { return c_.biases ? &params.zeros(prefix + name, 1, n) : nullptr; };
    if (c_.mixer == Mixer::learned) {  // (d, n_heads·d_k): q and k may be narrower or wider than d / n_heads
        W_q_ = &params.normal(prefix + "W_q", d, c_.n_heads * c_.d_k, s, rng), b_q_ = bias("b_q", c_.n_heads * c_.d_k);
        W_k_ = &params.normal(prefix + "W_k", d, c_.n_heads * c_.d_k, s, rng), b_k_ = bias("b_k", c_.n_heads * c_.d_k);
    }
    W_v_ = &params.normal(prefix + "W_v", d, d, s, rng), b_v_ = bias("b_v", d);
    if (c_.output_projection)
        W_o_ = &params.normal(prefix + "W_o", d, d, s, rng), b_o_ = c_.output_bias && !c_.biases ? &params.zeros(prefix + "b_o", 1, d) : bias("b_o", d);
}

void MultiHeadAttention::prepare_positions(std::size_t T) {
    if (c_.positions == Positions::rope && rope_angles_.shape(0) != T) {
        rope_angles_ = rope_angles(T, c_.d_k);
    }
    if (c_.positions == Positions::alibi && alibi_.shape(1) != T) {
        const std::vector<double> slopes = alibi_slopes(c_.n_heads);
        alibi_ = Tensor3::from_shape({c_.n_heads, T, T});
        for (std::size_t h = 0; h < c_.n_heads; ++h) xt::view(alibi_, h) = alibi_bias(T, slopes[h]);
    }
}

Mat MultiHeadAttention::forward(Mat x, std::size_t B, std::size_t T) {
    require(x.shape(0) == B * T && x.shape(1) == c_.d_model, "MultiHeadAttention::forward",
            "x " + shape_str(x) + " is not (B·T, d_model) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " +
                std::to_string(c_.d_model) + ")");
    B_ = B, T_ = T, x_ = std::move(x);  // kept for the backward's dW = xᵀ dy
    prepare_positions(T);
    const bool uniform = c_.mixer == Mixer::uniform;
    Mat v = linear_forward(x_, *W_v_, b_v_);  // (B·T, d_model)
    Mat q, k;                                 // uniform weights read no queries or keys
    if (!uniform) {
        q = linear_forward(x_, *W_q_, b_q_);  // (B·T, n_heads·d_k)
        k = linear_forward(x_, *W_k_, b_k_);
        if (c_.positions == Positions::rope) rotate_pairs(q, rope_angles_, c_.n_heads, 1.0f), rotate_pairs(k, rope_angles_, c_.n_heads, 1.0f);
    }
    const AttentionOptions options{.weights = uniform ? Weights::uniform : Weights::learned,
                                   .causal = c_.causal,
                                   .scale = c_.scale,
                                   .bias = c_.positions == Positions::alibi ? &alibi_ : nullptr};
    // q, k and v move into the cache, which keeps them for the backward
    heads_ = causal_attention_forward(std::move(q), std::move(k), std::move(v), B, T, c_.n_heads, cache_, options);
    return W_o_ ? linear_forward(heads_, *W_o_, b_o_) : heads_;  // (B·T, d_model)
}

Mat MultiHeadAttention::backward(const Mat& dy) {
    const bool uniform = c_.mixer == Mixer::uniform;
    const Mat dheads = W_o_ ? linear_backward(heads_, dy, *W_o_, b_o_) : dy;
    Mat dq, dk, dv;
    causal_attention_backward(dheads, cache_, B_, T_, c_.n_heads, dq, dk, dv);
    if (c_.positions == Positions::rope)  // q = R q₀, so dq₀ = Rᵀ dq: rotate back
        rotate_pairs(dq, rope_angles_, c_.n_heads, -1.0f), rotate_pairs(dk, rope_angles_, c_.n_heads, -1.0f);
    if (uniform) return linear_backward(x_, dv, *W_v_, b_v_);  // (B·T, d_model)
    Mat dx = linear_backward(x_, dq, *W_q_, b_q_);            // (B·T, d_model): x feeds q, k and v
    add_in_place(dx, linear_backward(x_, dk, *W_k_, b_k_));
    add_in_place(dx, linear_backward(x_, dv, *W_v_, b_v_));
    return dx;
}

// --- FeedForward ----------------------------------------------------------------------------------------------------

FeedForward::FeedForward(Parameters& params, const std::string& prefix, std::size_t d_model, std::size_t d_ff, Init init,
                         Rng& rng)
    : W_1_(&params.normal(prefix + "W_1", d_model, d_ff, init_std(init, d_model), rng)),
      b_1_(&params.zeros(prefix + "b_1", 1, d_ff)),
      W_2_(&params.normal(prefix + "W_2", d_ff, d_model, init_std(init, d_ff), rng)),
      b_2_(&params.zeros(prefix + "b_2", 1, d_model)) {}

Mat FeedForward::forward(Mat x) {
    x_ = std::move(x);  // kept for the backward's dW_1 = xᵀ dpre
    slope_ = linear_forward(x_, *W_1_, nullptr);  // (N, d_ff): x W_1, then b_1 added
    hidden_ = bias_gelu_forward(slope_, *b_1_);   // and now gelu' of x W_1 + b_1, for the backward
    return linear_forward(hidden_, *W_2_, b_2_);  // (N, d_model)
}

Mat FeedForward::backward(const Mat& dy) {
    const Mat dhidden = linear_backward(hidden_, dy, *W_2_, b_2_);       // (N, d_ff)
    return linear_backward(x_, gelu_backward_from_slope(slope_, dhidden), *W_1_, b_1_);  // (N, d_model)
}

// --- Block ------------------------------------------------------------------------------------------------------------

Block::Block(Parameters& params, const std::string& prefix, const BlockConfig& config, Init init, Rng& rng) : c_(config) {
    const std::size_t d = c_.attention.d_model, first = params.all().size();
    c_.attention.mixer = c_.mixer;
    // Pre-norm puts LN_1 before learned attention only: the uniform average reads the raw embeddings (a
    // LayerNorm per token before the average would let word order leak into it).
    const bool ln1 = c_.norm == Norm::post || (c_.norm == Norm::pre && c_.mixer == Mixer::learned);
    if (c_.mixer != Mixer::none) {
        if (ln1) ln1_.emplace(params, prefix + "ln1", d);
        attention_.emplace(params, prefix, c_.attention, init, rng);
    }
    if (c_.d_ff > 0) {
        if (c_.norm != Norm::none) ln2_.emplace(params, prefix + "ln2", d);
        ffn_.emplace(params, prefix, d, c_.d_ff, init, rng);
    }
    for (std::size_t i = first; i < params.all().size(); ++i) params_.push_back(&params.all()[i]);
}

Mat Block::forward(const Mat& x, std::size_t B, std::size_t T) {
    const bool pre = c_.norm == Norm::pre, post = c_.norm == Norm::post;
    Mat a;  // (B·T, d) after the first sub-layer
    if (attention_) {
        // the sub-layer keeps its input for its backward: LN_1's output moves there, x itself is copied
        Mat m = attention_->forward(pre && ln1_ ? ln1_->forward(x) : x, B, T);
        if (c_.residual) add_in_place(m, x);  // the first residual sum, a = x + m
        a = post ? ln1_->forward(m) : std::move(m);
    } else {
        a = x;
    }
    if (!ffn_) return a;
    Mat f = ffn_->forward(pre ? ln2_->forward(a) : a);
    if (c_.residual) add_in_place(f, a);  // the second, y = a + f
    Mat y = post ? ln2_->forward(f) : std::move(f);
    return y;  // (B·T, d)
}

Mat Block::backward(const Mat& dy) {
    const bool pre = c_.norm == Norm::pre, post = c_.norm == Norm::post;
    Mat da;  // (B·T, d): the loss's gradient at a
    if (ffn_) {
        Mat ds2_post;
        if (post) ds2_post = ln2_->backward(dy);  // through y = LN_2(s2)
        const Mat& ds2 = post ? ds2_post : dy;
        da = ffn_->backward(ds2);
        if (pre) da = ln2_->backward(da);
        if (c_.residual) add_in_place(da, ds2);  // a reaches s2 twice: through the FFN and straight
    } else {
        da = dy;
    }
    if (!attention_) return da;
    if (post) da = ln1_->backward(da);  // through a = LN_1(s1): now the gradient at s1
    Mat dx = attention_->backward(da);
    if (pre && ln1_) dx = ln1_->backward(dx);
    if (c_.residual) add_in_place(dx, da);
    return dx;  // (B·T, d)
}

std::size_t Block::param_count() const {
    std::size_t n = 0;
    for (const Param* p : params_) n += p->value.size();
    return n;
}

double Block::grad_norm() const {
    double sq = 0;
    for (const Param* p : params_)
        for (float g : p->grad) sq += static_cast<double>(g) * g;
    return std::sqrt(sq);
}

}  // namespace attn::fast
