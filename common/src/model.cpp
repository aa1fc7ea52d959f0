#include "attn/model.hpp"

#include <cmath>

#include "attn/error.hpp"
#include "attn/matmul.hpp"
#include "attn/positions.hpp"

namespace attn {

const char* position_name(PositionKind kind) {
    switch (kind) {
        case PositionKind::learned: return "learned";
        case PositionKind::sinusoidal: return "sinusoidal";
        case PositionKind::rope: return "RoPE";
        case PositionKind::alibi: return "ALiBi";
    }
    return "?";
}

namespace {
// RoPE on merged heads: rotates each head's pairs (2j, 2j+1) of row n by the angle (n mod T)·ω_j, or by
// its negative when sign = −1 (the backward: the transpose of a rotation is its inverse).
// x (B·T, n_heads·d_k); angles (T, d_k): cos in even columns, sin in odd ones.
void rotate_pairs(Mat& x, const Mat& angles, std::size_t n_heads, float sign) {
    const std::size_t T = angles.shape(0), dk = angles.shape(1), width = x.shape(1);
    require(width == n_heads * dk && x.shape(0) % T == 0, "rotate_pairs",
            "x " + shape_str(x) + " is not (B·T, n_heads·d_k) for angles " + shape_str(angles));
    for (std::size_t n = 0; n < x.shape(0); ++n) {
        float* row = x.data() + n * width;
        const float* a = angles.data() + (n % T) * dk;
        for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t j = 0; j < dk; j += 2) {
                const float c = a[j], s = sign * a[j + 1], x0 = row[h * dk + j], x1 = row[h * dk + j + 1];
                row[h * dk + j] = x0 * c - x1 * s;
                row[h * dk + j + 1] = x0 * s + x1 * c;
            }
    }
}
}  // namespace

Model::Model(const ModelConfig& c, std::uint64_t seed) : c_(c) {
    require(c.vocab > 0 && c.max_T > 0 && c.d_model > 0, "Model", "vocab, max_T and d_model must be positive");
    require(c.n_heads > 0 && c.d_model % c.n_heads == 0, "Model",
            "d_model = " + std::to_string(c.d_model) + " is not divisible by n_heads = " + std::to_string(c.n_heads));
    if (c_.d_k == 0) c_.d_k = c.d_model / c.n_heads;
    const bool rope_or_alibi = c.positions && (c.position == PositionKind::rope || c.position == PositionKind::alibi);
    require(!rope_or_alibi || c.mixer == Mixer::learned, "Model",
            std::string(position_name(c.position)) + " positions act on learned scores: they need mixer = learned");
    require(!(c.positions && c.position == PositionKind::rope) || c_.d_k % 2 == 0, "Model",
            "RoPE rotates pairs: d_k = " + std::to_string(c_.d_k) + " must be even");
    require(!(c.positions && c.position == PositionKind::sinusoidal) || c.d_model % 2 == 0, "Model",
            "sinusoidal positions come in sin/cos pairs: d_model = " + std::to_string(c.d_model) + " must be even");
    Rng rng(seed, 0x30de1);
    const std::size_t d = c.d_model, dqk = c.n_heads * c_.d_k;
    const float std_in = 1.0f / std::sqrt(static_cast<float>(d));  // keeps x W at the scale of x
    wte_ = &params_.normal("wte", c.vocab, d, 1.0f, rng);
    if (c.positions && c.position == PositionKind::learned) wpe_ = &params_.normal("wpe", c.max_T, d, 1.0f, rng);
    if (c.layernorm) {
        if (c.mixer == Mixer::learned) ln1_g_ = &params_.ones("ln1.gain", 1, d), ln1_b_ = &params_.zeros("ln1.bias", 1, d);
        if (c.d_ff > 0) ln2_g_ = &params_.ones("ln2.gain", 1, d), ln2_b_ = &params_.zeros("ln2.bias", 1, d);
        lnf_g_ = &params_.ones("lnf.gain", 1, d), lnf_b_ = &params_.zeros("lnf.bias", 1, d);
    }
    if (c.mixer == Mixer::learned) {
        wq_ = &params_.normal("W_q", d, dqk, std_in, rng);
        wk_ = &params_.normal("W_k", d, dqk, std_in, rng);
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

void Model::prepare_positions(std::size_t T) {
    if (!c_.positions) return;
    if (c_.position == PositionKind::sinusoidal && sinusoids_.shape(0) != T) sinusoids_ = sinusoidal_table(T, c_.d_model);
    if (c_.position == PositionKind::rope && rope_angles_.shape(0) != T) {
        // rope() of rows of (1, 0) pairs leaves (cos t·ω_j, sin t·ω_j): the library's angles, read back
        Mat unit = xt::zeros<float>({T, c_.d_k});
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < c_.d_k; j += 2) unit(t, j) = 1.0f;
        rope_angles_ = rope(unit);
    }
    if (c_.position == PositionKind::alibi && alibi_.shape(1) != T) {
        const std::vector<double> slopes = alibi_slopes(c_.n_heads);
        alibi_ = Tensor3::from_shape({c_.n_heads, T, T});
        for (std::size_t h = 0; h < c_.n_heads; ++h) xt::view(alibi_, h) = alibi_bias(T, slopes[h]);
    }
}

double Model::forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) {
    require(tokens.size() == B * T && targets.size() == B * T, "Model::forward",
            std::to_string(tokens.size()) + " tokens and " + std::to_string(targets.size()) +
                " targets for B·T = " + std::to_string(B) + "·" + std::to_string(T));
    require(T <= c_.max_T, "Model::forward", "T = " + std::to_string(T) + " exceeds max_T = " + std::to_string(c_.max_T));
    tokens_ = tokens, targets_ = targets, B_ = B, T_ = T;
    prepare_positions(T);
    x_ = embedding_forward(tokens, T, *wte_, wpe_);  // (N, d)
    if (sinusoids_.size() > 0)  // (T, d), only when position = sinusoidal
        for (std::size_t n = 0; n < x_.shape(0); ++n)
            for (std::size_t j = 0; j < c_.d_model; ++j) x_(n, j) += sinusoids_(n % T, j);
    h_ = x_;
    if (c_.mixer != Mixer::none) {
        const bool uniform = c_.mixer == Mixer::uniform;
        nx_ = ln1_g_ ? layernorm_forward(x_, *ln1_g_, *ln1_b_, ln1_) : x_;
        v_ = linear_forward(nx_, *wv_, nullptr);  // (N, d)
        if (!uniform) {
            q_ = linear_forward(nx_, *wq_, nullptr);  // (N, n_heads·d_k)
            k_ = linear_forward(nx_, *wk_, nullptr);
            if (rope_angles_.size() > 0) rotate_pairs(q_, rope_angles_, c_.n_heads, 1.0f), rotate_pairs(k_, rope_angles_, c_.n_heads, 1.0f);
        }
        const ScoreOptions scores{c_.scale, alibi_.size() > 0 ? &alibi_ : nullptr};
        // Uniform weights read no queries or keys: pass v in their place, it is never split.
        mixed_ = causal_attention_forward(uniform ? v_ : q_, uniform ? v_ : k_, v_, B, T, c_.n_heads, att_, uniform, true,
                                          scores);
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
        if (!uniform && rope_angles_.size() > 0)  // q = R q₀, so dq₀ = Rᵀ dq: rotate back
            rotate_pairs(dq, rope_angles_, c_.n_heads, -1.0f), rotate_pairs(dk, rope_angles_, c_.n_heads, -1.0f);
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
