#include "attn/model.hpp"

#include <cmath>

#include "attn/error.hpp"
#include "attn/matmul.hpp"

namespace attn {

Model::Model(const ModelConfig& c, std::uint64_t seed) : c_(c) {
    require(c.vocab > 0 && c.max_T > 0 && c.d_model > 0, "Model", "vocab, max_T and d_model must be positive");
    require(c.n_heads > 0 && c.d_model % c.n_heads == 0, "Model",
            "d_model = " + std::to_string(c.d_model) + " is not divisible by n_heads = " + std::to_string(c.n_heads));
    Rng rng(seed, 0x30de1);
    const std::size_t d = c.d_model;
    const float std_in = 1.0f / std::sqrt(static_cast<float>(d));  // keeps x W at the scale of x
    wte_ = &params_.normal("wte", c.vocab, d, 1.0f, rng);
    if (c.positions) wpe_ = &params_.normal("wpe", c.max_T, d, 1.0f, rng);
    if (c.layernorm) {
        if (c.mixer == Mixer::learned) ln1_g_ = &params_.ones("ln1.gain", 1, d), ln1_b_ = &params_.zeros("ln1.bias", 1, d);
        if (c.d_ff > 0) ln2_g_ = &params_.ones("ln2.gain", 1, d), ln2_b_ = &params_.zeros("ln2.bias", 1, d);
        lnf_g_ = &params_.ones("lnf.gain", 1, d), lnf_b_ = &params_.zeros("lnf.bias", 1, d);
    }
    if (c.mixer == Mixer::learned) {
        wq_ = &params_.normal("W_q", d, d, std_in, rng);
        wk_ = &params_.normal("W_k", d, d, std_in, rng);
    }
    if (c.mixer != Mixer::none) {
        wv_ = &params_.normal("W_v", d, d, std_in, rng);
        wo_ = &params_.normal("W_o", d, d, std_in, rng);
    }
    if (c.d_ff > 0) {
        w1_ = &params_.normal("W_1", d, c.d_ff, std_in, rng);
        b1_ = &params_.zeros("b_1", 1, c.d_ff);
        w2_ = &params_.normal("W_2", c.d_ff, d, 1.0f / std::sqrt(static_cast<float>(c.d_ff)), rng);
        b2_ = &params_.zeros("b_2", 1, d);
    }
    if (!c.tied) wout_ = &params_.normal("W_out", d, c.vocab, std_in, rng);
    bout_ = &params_.zeros("b_out", 1, c.vocab);
}

double Model::forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) {
    require(tokens.size() == B * T && targets.size() == B * T, "Model::forward",
            std::to_string(tokens.size()) + " tokens and " + std::to_string(targets.size()) +
                " targets for B·T = " + std::to_string(B) + "·" + std::to_string(T));
    require(T <= c_.max_T, "Model::forward", "T = " + std::to_string(T) + " exceeds max_T = " + std::to_string(c_.max_T));
    tokens_ = tokens, targets_ = targets, B_ = B, T_ = T;
    x_ = embedding_forward(tokens, T, *wte_, wpe_);  // (N, d)
    h_ = x_;
    if (c_.mixer != Mixer::none) {
        const bool uniform = c_.mixer == Mixer::uniform;
        nx_ = ln1_g_ ? layernorm_forward(x_, *ln1_g_, *ln1_b_, ln1_) : x_;
        v_ = linear_forward(nx_, *wv_, nullptr);  // (N, d)
        if (!uniform) {
            q_ = linear_forward(nx_, *wq_, nullptr);
            k_ = linear_forward(nx_, *wk_, nullptr);
        }
        // Uniform weights read no queries or keys: pass v in their place, it is never split.
        mixed_ = causal_attention_forward(uniform ? v_ : q_, uniform ? v_ : k_, v_, B, T, c_.n_heads, att_, uniform);
        const Mat m = linear_forward(mixed_, *wo_, nullptr);
        h_ = c_.residual ? Mat(x_ + m) : m;
    }
    out_ = h_;
    if (c_.d_ff > 0) {
        nh_ = c_.layernorm ? layernorm_forward(h_, *ln2_g_, *ln2_b_, ln2_) : h_;
        pre_ff_ = linear_forward(nh_, *w1_, b1_);  // (N, d_ff)
        ff_hidden_ = gelu_forward(pre_ff_);
        out_ = h_ + linear_forward(ff_hidden_, *w2_, b2_);
    }
    nout_ = c_.layernorm ? layernorm_forward(out_, *lnf_g_, *lnf_b_, lnf_) : out_;
    logits_ = c_.tied ? tied_output_forward(nout_, *wte_, bout_) : linear_forward(nout_, *wout_, bout_);  // (N, V)
    ce_ = cross_entropy_forward(logits_, targets);
    return ce_.loss;
}

void Model::backward() {
    const Mat dlogits = cross_entropy_backward(ce_, targets_);
    // (N, d): the gradient of nout_, until the final LayerNorm is undone below
    Mat dout = c_.tied ? tied_output_backward(nout_, dlogits, *wte_, bout_) : linear_backward(nout_, dlogits, *wout_, bout_);
    if (c_.layernorm) dout = layernorm_backward(dout, lnf_, *lnf_g_, *lnf_b_);
    Mat dh = dout;
    if (c_.d_ff > 0) {
        const Mat dhidden = linear_backward(ff_hidden_, dout, *w2_, b2_);
        const Mat dnh = linear_backward(nh_, gelu_backward(pre_ff_, dhidden), *w1_, b1_);
        dh += c_.layernorm ? layernorm_backward(dnh, ln2_, *ln2_g_, *ln2_b_) : dnh;
    }
    Mat dx = dh;
    if (c_.mixer != Mixer::none) {
        const bool uniform = c_.mixer == Mixer::uniform;
        const Mat dmixed = linear_backward(mixed_, dh, *wo_, nullptr);
        Mat dq, dk, dv;
        causal_attention_backward(dmixed, att_, B_, T_, c_.n_heads, uniform, dq, dk, dv);
        Mat dnx = linear_backward(nx_, dv, *wv_, nullptr);
        if (!uniform) {
            dnx += linear_backward(nx_, dq, *wq_, nullptr);
            dnx += linear_backward(nx_, dk, *wk_, nullptr);
        }
        dx = c_.residual ? dh : Mat(xt::zeros<float>(dh.shape()));
        dx += ln1_g_ ? layernorm_backward(dnx, ln1_, *ln1_g_, *ln1_b_) : dnx;
    }
    embedding_backward(tokens_, T_, dx, *wte_, wpe_);
}

}  // namespace attn
