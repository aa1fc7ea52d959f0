#include "attn/transformer.hpp"

#include <cmath>

#include "attn/error.hpp"
#include "attn/matmul.hpp"

namespace attn {

Transformer::Transformer(const TransformerConfig& config, std::uint64_t seed) : c_(config) {
    if (c_.d_ff == 0) c_.d_ff = 4 * c_.d_model;
    const std::size_t d = c_.d_model, V = c_.vocab;
    require(V > 0 && c_.max_T > 0 && d > 0 && c_.n_layers > 0, "Transformer", "vocab, max_T, d_model and n_layers must be positive");
    require(c_.n_heads > 0 && d % c_.n_heads == 0, "Transformer",
            "d_model = " + std::to_string(d) + " is not divisible by n_heads = " + std::to_string(c_.n_heads));
    Rng rng(seed, 0x7f);
    const bool torch = c_.init_std == 0.0f;
    const float emb = torch ? 1.0f : c_.init_std;
    auto matrix_std = [&](std::size_t fan_in) { return torch ? 1.0f / std::sqrt(3.0f * static_cast<float>(fan_in)) : c_.init_std; };
    const float s = matrix_std(d), s2 = matrix_std(c_.d_ff);
    wte_ = &params_.normal("wte", V, d, emb, rng);
    wpe_ = &params_.normal("wpe", c_.max_T, d, emb, rng);
    blocks_.resize(c_.n_layers);
    for (std::size_t l = 0; l < c_.n_layers; ++l) {
        Block& b = blocks_[l];
        const std::string p = "block" + std::to_string(l) + ".";
        b.ln1_g = &params_.ones(p + "ln1.gain", 1, d), b.ln1_b = &params_.zeros(p + "ln1.bias", 1, d);
        b.wq = &params_.normal(p + "W_q", d, d, s, rng), b.bq = &params_.zeros(p + "b_q", 1, d);
        b.wk = &params_.normal(p + "W_k", d, d, s, rng), b.bk = &params_.zeros(p + "b_k", 1, d);
        b.wv = &params_.normal(p + "W_v", d, d, s, rng), b.bv = &params_.zeros(p + "b_v", 1, d);
        b.wo = &params_.normal(p + "W_o", d, d, s, rng), b.bo = &params_.zeros(p + "b_o", 1, d);
        b.ln2_g = &params_.ones(p + "ln2.gain", 1, d), b.ln2_b = &params_.zeros(p + "ln2.bias", 1, d);
        b.w1 = &params_.normal(p + "W_1", d, c_.d_ff, s, rng), b.b1 = &params_.zeros(p + "b_1", 1, c_.d_ff);
        b.w2 = &params_.normal(p + "W_2", c_.d_ff, d, s2, rng), b.b2 = &params_.zeros(p + "b_2", 1, d);
        b.all = {b.ln1_g, b.ln1_b, b.wq, b.bq, b.wk, b.bk, b.wv, b.bv, b.wo, b.bo, b.ln2_g, b.ln2_b, b.w1, b.b1, b.w2, b.b2};
    }
    if (c_.norm == Norm::pre) lnf_g_ = &params_.ones("lnf.gain", 1, d), lnf_b_ = &params_.zeros("lnf.bias", 1, d);
    if (!c_.tied) head_w_ = &params_.normal("head.W", d, V, s, rng), head_b_ = &params_.zeros("head.b", 1, V);
}

Mat Transformer::block_forward(Block& b, const Mat& x) {
    Cache& c = b.cache;
    const bool pre = c_.norm == Norm::pre;
    c.x = x;
    c.n1 = pre ? layernorm_forward(x, *b.ln1_g, *b.ln1_b, c.ln1) : x;  // the attention's input
    c.q = linear_forward(c.n1, *b.wq, b.bq), c.k = linear_forward(c.n1, *b.wk, b.bk), c.v = linear_forward(c.n1, *b.wv, b.bv);
    c.mixed = causal_attention_forward(c.q, c.k, c.v, B_, T_, c_.n_heads, c.att);
    c.s1 = x + linear_forward(c.mixed, *b.wo, b.bo);                      // the residual sum
    c.a = pre ? c.s1 : layernorm_forward(c.s1, *b.ln1_g, *b.ln1_b, c.ln1);
    c.n2 = pre ? layernorm_forward(c.a, *b.ln2_g, *b.ln2_b, c.ln2) : c.a;  // the FFN's input
    c.pre_ff = linear_forward(c.n2, *b.w1, b.b1);
    c.hidden = gelu_forward(c.pre_ff);
    c.s2 = c.a + linear_forward(c.hidden, *b.w2, b.b2);
    c.y = pre ? c.s2 : layernorm_forward(c.s2, *b.ln2_g, *b.ln2_b, c.ln2);
    return c.y;
}

Mat Transformer::block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T) {
    require(layer < blocks_.size(), "Transformer::block_forward",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(blocks_.size()) + " blocks");
    require(x.shape(0) == B * T && x.shape(1) == c_.d_model, "Transformer::block_forward",
            "x " + shape_str(x) + " is not (B·T, d_model) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " +
                std::to_string(c_.d_model) + ")");
    B_ = B, T_ = T;
    return block_forward(blocks_[layer], x);
}

Mat Transformer::block_backward(Block& b, const Mat& dy) {
    Cache& c = b.cache;
    const bool pre = c_.norm == Norm::pre;
    const Mat ds2 = pre ? dy : layernorm_backward(dy, c.ln2, *b.ln2_g, *b.ln2_b);
    // FFN: s2 = a + W_2 gelu(n2 W_1 + b_1) + b_2
    const Mat dhidden = linear_backward(c.hidden, ds2, *b.w2, b.b2);
    const Mat dn2 = linear_backward(c.n2, gelu_backward(c.pre_ff, dhidden), *b.w1, b.b1);
    Mat da = ds2 + (pre ? layernorm_backward(dn2, c.ln2, *b.ln2_g, *b.ln2_b) : dn2);
    const Mat ds1 = pre ? da : layernorm_backward(da, c.ln1, *b.ln1_g, *b.ln1_b);
    // attention: s1 = x + MHA(n1) W_o + b_o
    const Mat dmixed = linear_backward(c.mixed, ds1, *b.wo, b.bo);
    Mat dq, dk, dv;
    causal_attention_backward(dmixed, c.att, B_, T_, c_.n_heads, false, dq, dk, dv);
    Mat dn1 = linear_backward(c.n1, dq, *b.wq, b.bq);
    dn1 += linear_backward(c.n1, dk, *b.wk, b.bk);
    dn1 += linear_backward(c.n1, dv, *b.wv, b.bv);
    return ds1 + (pre ? layernorm_backward(dn1, c.ln1, *b.ln1_g, *b.ln1_b) : dn1);
}

double Transformer::forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) {
    require(tokens.size() == B * T && targets.size() == B * T, "Transformer::forward",
            std::to_string(tokens.size()) + " tokens and " + std::to_string(targets.size()) + " targets for B·T = " +
                std::to_string(B) + "·" + std::to_string(T));
    require(T <= c_.max_T, "Transformer::forward", "T = " + std::to_string(T) + " exceeds max_T = " + std::to_string(c_.max_T));
    tokens_ = tokens, targets_ = targets, B_ = B, T_ = T;
    Mat x = embedding_forward(tokens, T, *wte_, wpe_);  // (N, d)
    for (Block& b : blocks_) x = block_forward(b, x);
    top_ = x;
    ntop_ = c_.norm == Norm::pre ? layernorm_forward(top_, *lnf_g_, *lnf_b_, lnf_) : top_;
    // (N, V): the output layer is the token table read backwards, or its own linear layer
    logits_ = c_.tied ? tied_output_forward(ntop_, *wte_, nullptr) : linear_forward(ntop_, *head_w_, head_b_);
    ce_ = cross_entropy_forward(logits_, targets);
    return ce_.loss;
}

void Transformer::backward() {
    const Mat dlogits = cross_entropy_backward(ce_, targets_);  // (N, V)
    Mat dx = c_.tied ? tied_output_backward(ntop_, dlogits, *wte_, nullptr) : linear_backward(ntop_, dlogits, *head_w_, head_b_);  // (N, d)
    if (c_.norm == Norm::pre) dx = layernorm_backward(dx, lnf_, *lnf_g_, *lnf_b_);
    output_grad_norms_.assign(blocks_.size(), 0.0);
    for (std::size_t l = blocks_.size(); l-- > 0;) {
        output_grad_norms_[l] = std::sqrt(static_cast<double>(xt::sum(dx * dx)()));
        dx = block_backward(blocks_[l], dx);
    }
    embedding_backward(tokens_, T_, dx, *wte_, wpe_);
}

std::vector<Transformer::Traced> Transformer::block_trace(std::size_t layer) const {
    const Cache& c = blocks_.at(layer).cache;
    require(c.y.size() > 0, "block_trace", "no forward has run yet");
    auto shape = [](const auto& t) { return std::vector<std::size_t>(t.shape().begin(), t.shape().end()); };
    const bool pre = c_.norm == Norm::pre;
    std::vector<Traced> t = {
        {"x", "the block's input, one row per token", shape(c.x)},
        {pre ? "LN_1(x)" : "x", pre ? "each row normalised" : "post-norm: attention reads x itself", shape(c.n1)},
        {"q = n W_q + b_q", "queries, all heads side by side", shape(c.q)},
        {"k, v", "keys and values, the same shape", shape(c.k)},
        {"q, k, v per head", "split along the features: (B·h, T, d_head)", shape(c.att.q)},
        {"weights", "softmax(q kᵀ / √d_head + causal mask), per head", shape(c.att.weights)},
        {"heads", "weights v, merged back", shape(c.mixed)},
        {pre ? "a = x + heads W_o + b_o" : "a = LN_1(x + heads W_o + b_o)", "after the first residual", shape(c.a)},
        {"hidden = gelu(n W_1 + b_1)", "the FFN's 4d-wide middle", shape(c.hidden)},
        {pre ? "y = a + hidden W_2 + b_2" : "y = LN_2(a + hidden W_2 + b_2)", "the block's output, the next one's input", shape(c.y)}};
    return t;
}

std::size_t Transformer::block_param_count(std::size_t layer) {
    std::size_t n = 0;
    for (const Param* p : blocks_.at(layer).all) n += p->value.size();
    return n;
}

double Transformer::block_grad_norm(std::size_t layer) {
    double sq = 0;
    for (const Param* p : blocks_.at(layer).all)
        for (float g : p->grad) sq += static_cast<double>(g) * g;
    return std::sqrt(sq);
}

}  // namespace attn
