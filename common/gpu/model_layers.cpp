// The GPU model's layers, each beside its reference twin (common/reference/): the same forward and backward,
// as device operations. N = B·T rows throughout.
#include "model_layers.hpp"

#include <cmath>
#include <iostream>
#include <mutex>

#include "core/error.hpp"
#include "math/positions.hpp"
#include "ops.hpp"
#include "train_layers.hpp"
#include "transformer_gpu.hpp"

namespace attn::gpu {

float* sized(DeviceBuffer& b, std::size_t count, const char* what) {
    if (b.size() < count) b = DeviceBuffer(count, what);
    return b.data();
}

namespace {
std::size_t rows(int B, int T) { return static_cast<std::size_t>(B) * T; }
}  // namespace

void PositionTables::prepare(const ModelConfig& c, int T_) {
    if (T == T_) return;
    T = T_;
    const std::size_t d = c.d_model;
    if (c.positions == Positions::sinusoidal)
        sinusoids = to_device(sinusoidal_table(static_cast<std::size_t>(T), d), "the sinusoidal table (T, d)");
    if (c.positions == Positions::rope)  // the CPU attention's angles, (T, d_k)
        rope_angles = to_device(attn::rope_angles(static_cast<std::size_t>(T), c.d_k ? c.d_k : d / c.n_heads), "RoPE's angles (T, d_k)");
    if (c.positions == Positions::alibi && alibi_slopes.size() == 0) {
        const std::vector<double> slopes = attn::alibi_slopes(c.n_heads);
        const std::vector<float> f(slopes.begin(), slopes.end());
        alibi_slopes = DeviceBuffer(f.size(), "ALiBi's slopes (n_heads)");
        alibi_slopes.upload(f.data(), f.size());
    }
}

// --- Linear, Gelu, LayerNorm --------------------------------------------------------------------------------------

const float* Linear::forward(const float* x, int B, int T) {
    x_ = x, N_ = B * T;
    float* y = sized(y_, rows(B, T) * out_, "Linear y (N, out)");
    gemm_strided_batched(Op::as_is, Op::as_is, N_, out_, in_, 1.0f, x, in_, 0, W_.w(), out_, 0, 0.0f, y, out_, 0, 1);  // x W
    if (b_) bias_add(y, b_->w(), static_cast<std::size_t>(N_), out_);                                              // + b
    return y;
}

void Linear::backward_into(const float* dy, float* dx, Into into) {
    gemm_strided_batched(Op::transposed, Op::as_is, in_, out_, N_, 1.0f, x_, in_, 0, dy, out_, 0, 1.0f, W_.g(), out_, 0, 1);  // W.grad += xᵀ dy
    if (b_) bias_backward(dy, b_->g(), N_, out_, &sums_);  // b.grad += Σ_rows dy
    gemm_strided_batched(Op::as_is, Op::transposed, N_, in_, out_, 1.0f, dy, out_, 0, W_.w(), out_, 0, into == Into::add ? 1.0f : 0.0f,
                         dx, in_, 0, 1);  // dx (+)= dy Wᵀ
}

const float* Linear::backward(const float* dy) {
    float* dx = sized(dx_, static_cast<std::size_t>(N_) * in_, "Linear dx (N, in)");
    backward_into(dy, dx, Into::write);
    return dx;
}

const float* Gelu::forward(const float* x, int B, int T) {
    x_ = x, N_ = B * T;
    float* y = sized(y_, rows(B, T) * d_, "Gelu y (N, d_ff)");
    gelu(x, y, rows(B, T) * d_);
    return y;
}

const float* Gelu::backward(const float* dy) {
    float* dx = sized(dx_, static_cast<std::size_t>(N_) * d_, "Gelu dx (N, d_ff)");
    gelu_backward(x_, dy, dx, static_cast<std::size_t>(N_) * d_);
    return dx;
}

const float* LayerNorm::forward(const float* x, int B, int T) {
    x_ = x, N_ = B * T;
    float* y = sized(y_, rows(B, T) * d_, "LayerNorm y (N, d)");
    layernorm_forward(x, gain_.w(), bias_.w(), y, sized(mean_, rows(B, T), "LayerNorm mean (N)"), sized(rstd_, rows(B, T), "LayerNorm rstd (N)"),
                      N_, d_);
    return y;
}

const float* LayerNorm::backward(const float* dy) {
    float* dx = sized(dx_, static_cast<std::size_t>(N_) * d_, "LayerNorm dx (N, d)");
    layernorm_backward(dy, x_, gain_.w(), mean_.data(), rstd_.data(), dx, gain_.g(), bias_.g(), N_, d_, &sums_);
    return dx;
}

// --- Sequence, Residual, FeedForward --------------------------------------------------------------------------------

const float* Sequence::forward(const float* x, int B, int T) {
    for (auto& layer : layers_) x = layer->forward(x, B, T);
    return x;
}

const float* Sequence::backward(const float* dy) {
    for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) dy = (*layer)->backward(dy);
    return dy;
}

const float* Residual::forward(const float* x, int B, int T) {
    n_ = rows(B, T) * d_;
    const float* fx = f_->forward(x, B, T);
    float* y = sized(y_, n_, "Residual y (N, d)");
    residual_add(x, fx, y, n_);  // y = x + f(x)
    return y;
}

const float* Residual::backward(const float* dy) {
    const float* df = f_->backward(dy);
    float* dx = sized(dx_, n_, "Residual dx (N, d)");
    residual_add(df, dy, dx, n_);  // dx = f's backward of dy + dy
    return dx;
}

FeedForward::FeedForward(const ParamLookup& at, const std::string& prefix, int d_model, int d_ff)
    : up_(*at(prefix + "W_1"), at(prefix + "b_1"), d_model, d_ff), gelu_(d_ff), down_(*at(prefix + "W_2"), at(prefix + "b_2"), d_ff, d_model) {}

const float* FeedForward::forward(const float* x, int B, int T) {
    return down_.forward(gelu_.forward(up_.forward(x, B, T), B, T), B, T);  // (N, d) → (N, d_ff) → (N, d)
}

const float* FeedForward::backward(const float* dy) { return up_.backward(gelu_.backward(down_.backward(dy))); }

// --- the attention of split heads ----------------------------------------------------------------------------------

AttentionShape attention_shape(const ModelConfig& c, int B, int T, const float* alibi_slopes) {
    const int h = static_cast<int>(c.n_heads), d_v = static_cast<int>(c.d_model) / h;
    const bool learned = c.mixer == Mixer::learned;
    const int d_k = learned && c.d_k ? static_cast<int>(c.d_k) : d_v;
    return {.B = B, .n_heads = h, .T = T, .d_k = d_k, .d_v = d_v, .weighting = learned ? Weighting::learned : Weighting::uniform,
            .causal = c.causal, .scale = c.scale ? 1.0f / std::sqrt(static_cast<float>(d_k)) : 1.0f, .alibi_slopes = alibi_slopes};
}

bool takes_flash(AttentionPath path, const AttentionShape& s, std::size_t shared_limit) {
    if (path != AttentionPath::automatic) return path == AttentionPath::flash;
    if (!flash_supports(s)) return false;
    const std::string why = flash_shared_refusal(s.d_k, shared_limit);
    if (why.empty()) return true;
    static std::once_flag said;
    std::call_once(said, [&] { std::cerr << "GpuModel: " << why << ": attention takes the materialised path\n"; });
    return false;
}

const float* HeadAttention::forward(const float* q, const float* k, const float* v, const AttentionShape& s) {
    s_ = s, q_ = q, k_ = k, v_ = v;
    ran_kernel_ = kernel_;
    if (kernel_) {  // one of the three forward kernels (ops.hpp), causal and scaled by 1/√d_head
        require(s.weighting == Weighting::learned && s.causal && !s.alibi_slopes && s.d_k == s.d_v &&
                    s.scale == 1.0f / std::sqrt(static_cast<float>(s.d_k)),
                "gpu::HeadAttention", std::string("attention ") + version_name(*kernel_) +
                                          " computes learned causal attention scaled by 1/sqrt(d_head), without ALiBi, only");
        flash_ = false;
        float* out = sized(out_, s.BH() * static_cast<std::size_t>(s.T) * s.d_v, "attention out (B·h, T, d_v)");
        attention(*kernel_, q, k, v, out, s.BH(), s.T, s.d_k);
        return out;
    }
    flash_ = takes_flash(path_, s, shared_limit_);
    if (flash_ && !flash_supports(s))  // asked for (AttentionPath::flash) on a shape it does not take
        throw Error("GpuModel: the flash path does not take this block's attention (" +
                    std::string(s.weighting == Weighting::learned ? "" : "uniform weights, ") + (s.causal ? "" : "no mask, ") + "d_k " +
                    std::to_string(s.d_k) + ", d_v " + std::to_string(s.d_v) + ")");
    if (flash_ && flash_shared_bytes(s.d_k) > shared_limit_)  // asked for on a card whose blocks it does not fit
        throw Error("GpuModel: AttentionPath::flash: " + flash_shared_refusal(s.d_k, shared_limit_) + "; take the materialised or the automatic path");
    const std::size_t BH = s.BH(), T = s.T;
    float* out = sized(out_, BH * T * s.d_v, "attention out (B·h, T, d_v)");
    if (flash_)  // each row's log-sum-exp (B·h, T) is all the backward needs
        attention_forward_flash(q, k, v, out, sized(lse_, BH * T, "attention lse (B·h, T)"), s);
    else  // weights = softmax(q kᵀ · scale + ALiBi, mask) (B·h, T, T), kept; out = weights v
        attention_forward_materialised(q, k, v, out, sized(weights_, BH * T * T, "attention weights (B·h, T, T)"), s);
    return out;
}

void HeadAttention::backward(const float* dout) {
    if (ran_kernel_)
        throw Error("gpu::HeadAttention::backward: the last forward ran a forward-only kernel (attention " +
                    std::string(version_name(*ran_kernel_)) + "), which keeps nothing for a backward");
    const std::size_t BH = s_.BH(), T = s_.T, nqk = BH * T * s_.d_k, nv = BH * T * s_.d_v;
    const bool learned = s_.weighting == Weighting::learned;
    float* dq = sized(dq_, learned ? nqk : nv, "attention dq (B·h, T, d_k)");
    float* dk = sized(dk_, learned ? nqk : nv, "attention dk (B·h, T, d_k)");
    float* dv = sized(dv_, nv, "attention dv (B·h, T, d_v)");
    if (flash_)
        attention_backward_flash(q_, k_, v_, out_.data(), lse_.data(), dout, dq, dk, dv, sized(delta_, BH * T, "attention delta (B·h, T)"), s_);
    else
        attention_backward_materialised(q_, k_, v_, weights_.data(), dout, dq, dk, dv, sized(dweights_, BH * T * T, "attention dweights (B·h, T, T)"),
                                        s_);
}

// --- SelfAttention ------------------------------------------------------------------------------------------------

namespace {
DeviceParam* bias(const ParamLookup& at, const ModelConfig& c, const std::string& name) { return c.biases ? at(name) : nullptr; }
DeviceParam* output_bias(const ParamLookup& at, const ModelConfig& c, const std::string& name) {
    return c.biases || c.output_bias ? at(name) : nullptr;
}
}  // namespace

SelfAttention::SelfAttention(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, const PositionTables& tables,
                             AttentionPath path, std::size_t shared_limit)
    : c_(c),
      tables_(tables),
      d_(static_cast<int>(c.d_model)),
      h_(static_cast<int>(c.n_heads)),
      d_k_(c.d_k ? static_cast<int>(c.d_k) : d_ / h_),
      d_v_(d_ / h_),
      q_proj_(*at(prefix + "W_q"), bias(at, c, prefix + "b_q"), d_, h_ * d_k_),
      k_proj_(*at(prefix + "W_k"), bias(at, c, prefix + "b_k"), d_, h_ * d_k_),
      v_proj_(*at(prefix + "W_v"), bias(at, c, prefix + "b_v"), d_, d_),
      attend_(path, shared_limit) {
    if (c.output_projection) out_proj_.emplace(*at(prefix + "W_o"), output_bias(at, c, prefix + "b_o"), d_, d_);
}

const float* SelfAttention::forward(const float* x, int B, int T) {
    B_ = B, T_ = T;
    const std::size_t N = rows(B, T), nqk = N * h_ * d_k_;
    const float* q = q_proj_.forward(x, B, T);  // (B·T, h·d_k)
    const float* k = k_proj_.forward(x, B, T);  // (B·T, h·d_k)
    const float* v = v_proj_.forward(x, B, T);  // (B·T, d_model) = (B·T, h·d_v)
    // one (T, width) matrix per sequence and head: (B·h, T, d_k) and (B·h, T, d_v)
    float* q_h = sized(q_h_, nqk, "q (B·h, T, d_k)");
    float* k_h = sized(k_h_, nqk, "k (B·h, T, d_k)");
    float* v_h = sized(v_h_, N * d_, "v (B·h, T, d_v)");
    split_heads(q, q_h, B, T, h_, d_k_), split_heads(k, k_h, B, T, h_, d_k_), split_heads(v, v_h, B, T, h_, d_v_);
    if (c_.positions == Positions::rope) {  // each pair of columns turned by the angle of its position (every head's rows)
        rope_rotate(q_h, tables_.rope_angles.data(), B * h_, T, 1, d_k_, 1.0f);
        rope_rotate(k_h, tables_.rope_angles.data(), B * h_, T, 1, d_k_, 1.0f);
    }
    const float* alibi = c_.positions == Positions::alibi ? tables_.alibi_slopes.data() : nullptr;
    const float* heads = attend_.forward(q_h, k_h, v_h, attention_shape(c_, B, T, alibi));  // (B·h, T, d_v)
    float* merged = sized(merged_, N * d_, "heads side by side (B·T, d_model)");
    merge_heads(heads, merged, B, T, h_, d_v_);  // (B·T, d_model)
    return out_proj_ ? out_proj_->forward(merged, B, T) : merged;
}

const float* SelfAttention::backward(const float* dy) {
    const int B = B_, T = T_;
    const std::size_t N = rows(B, T), nqk = N * h_ * d_k_;
    const float* dmerged = out_proj_ ? out_proj_->backward(dy) : dy;  // (B·T, d_model)
    float* dheads = sized(dheads_, N * d_, "dheads (B·h, T, d_v)");
    split_heads(dmerged, dheads, B, T, h_, d_v_);  // (B·h, T, d_v)
    attend_.backward(dheads);
    float* dq = sized(dq_, nqk, "dq (B·T, h·d_k)");
    float* dk = sized(dk_, nqk, "dk (B·T, h·d_k)");
    float* dv = sized(dv_, N * d_, "dv (B·T, d_model)");
    merge_heads(attend_.dv(), dv, B, T, h_, d_v_);
    merge_heads(attend_.dq(), dq, B, T, h_, d_k_);
    merge_heads(attend_.dk(), dk, B, T, h_, d_k_);
    if (c_.positions == Positions::rope)  // the rotation's transpose
        rope_rotate(dq, tables_.rope_angles.data(), B, T, h_, d_k_, -1.0f), rope_rotate(dk, tables_.rope_angles.data(), B, T, h_, d_k_, -1.0f);
    float* dx = sized(dx_, N * d_, "SelfAttention dx (B·T, d_model)");  // x reaches the output through q, k and v
    q_proj_.backward_into(dq, dx, Into::write);
    k_proj_.backward_into(dk, dx, Into::add);
    v_proj_.backward_into(dv, dx, Into::add);
    return dx;
}

// --- UniformAverage --------------------------------------------------------------------------------------------------

UniformAverage::UniformAverage(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, AttentionPath path,
                               std::size_t shared_limit)
    : c_(c),
      d_(static_cast<int>(c.d_model)),
      h_(static_cast<int>(c.n_heads)),
      d_v_(d_ / h_),
      v_proj_(*at(prefix + "W_v"), bias(at, c, prefix + "b_v"), d_, d_),
      attend_(path, shared_limit) {  // (the flash path, asked for by name, refuses uniform weights)
    if (c.output_projection) out_proj_.emplace(*at(prefix + "W_o"), output_bias(at, c, prefix + "b_o"), d_, d_);
}

const float* UniformAverage::forward(const float* x, int B, int T) {
    B_ = B, T_ = T;
    const std::size_t N = rows(B, T);
    const float* v = v_proj_.forward(x, B, T);  // (B·T, d_model)
    float* v_h = sized(v_h_, N * d_, "v (B·h, T, d_v)");
    split_heads(v, v_h, B, T, h_, d_v_);  // (B·h, T, d_v)
    const float* heads = attend_.forward(v_h, v_h, v_h, attention_shape(c_, B, T, nullptr));  // weights 1/(t+1): q and k unread
    float* merged = sized(merged_, N * d_, "heads side by side (B·T, d_model)");
    merge_heads(heads, merged, B, T, h_, d_v_);
    return out_proj_ ? out_proj_->forward(merged, B, T) : merged;
}

const float* UniformAverage::backward(const float* dy) {
    const std::size_t N = rows(B_, T_);
    const float* dmerged = out_proj_ ? out_proj_->backward(dy) : dy;
    float* dheads = sized(dheads_, N * d_, "dheads (B·h, T, d_v)");
    split_heads(dmerged, dheads, B_, T_, h_, d_v_);
    attend_.backward(dheads);
    float* dv = sized(dv_, N * d_, "dv (B·T, d_model)");
    merge_heads(attend_.dv(), dv, B_, T_, h_, d_v_);
    return v_proj_.backward(dv);
}

// --- the chapter's block ------------------------------------------------------------------------------------------

Block::Block(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, const PositionTables& tables, AttentionPath path,
             std::size_t shared_limit)
    : d_(static_cast<int>(c.d_model)),
      ln1_(*at(prefix + "ln1.gain"), *at(prefix + "ln1.bias"), d_),
      attn_(at, prefix, c, tables, path, shared_limit),
      ln2_(*at(prefix + "ln2.gain"), *at(prefix + "ln2.bias"), d_),
      ffn_(at, prefix, d_, static_cast<int>(c.d_ff)) {}

const float* Block::forward(const float* x, int B, int T) {
    n_ = rows(B, T) * d_;
    float* a = sized(a_, n_, "Block a (B·T, d)");
    float* y = sized(y_, n_, "Block y (B·T, d)");
    residual_add(x, attn_.forward(ln1_.forward(x, B, T), B, T), a, n_);  // a = x + attn(ln1(x))
    residual_add(a, ffn_.forward(ln2_.forward(a, B, T), B, T), y, n_);   // y = a + ffn(ln2(a))
    return y;
}

const float* Block::backward(const float* dy) {
    float* da = sized(da_, n_, "Block da (B·T, d)");
    float* dx = sized(dx_, n_, "Block dx (B·T, d)");
    residual_add(dy, ln2_.backward(ffn_.backward(dy)), da, n_);  // a reaches y twice: straight, and through the FFN
    residual_add(da, ln1_.backward(attn_.backward(da)), dx, n_);  // so does x reach a
    return dx;
}

// --- the ladder's blocks, and post-norm: the same pieces composed ---------------------------------------------------

namespace {
// One sub-layer f with its LayerNorm and its residual sum, where Mục 9.5 places them:
//   pre-norm x + f(LN(x)),  post-norm LN(x + f(x)),  no norm x + f(x);  without the residual, f's output replaces x.
std::unique_ptr<Layer> sublayer(std::unique_ptr<Layer> norm, std::unique_ptr<Layer> f, Norm where, bool residual, int d) {
    auto inner = std::make_unique<Sequence>();
    if (norm && where == Norm::pre) inner->add(std::move(norm));
    inner->add(std::move(f));
    std::unique_ptr<Layer> body = std::move(inner);
    if (residual) body = std::make_unique<Residual>(std::move(body), d);
    if (!norm) return body;
    auto outer = std::make_unique<Sequence>();  // post-norm: the norm after the sum
    outer->add(std::move(body));
    outer->add(std::move(norm));
    return outer;
}
}  // namespace

std::unique_ptr<Layer> make_block(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, const PositionTables& tables,
                                  AttentionPath path, std::size_t shared_limit) {
    if (c.mixer == Mixer::learned && c.d_ff > 0 && c.norm == Norm::pre && c.residual)
        return std::make_unique<Block>(at, prefix, c, tables, path, shared_limit);
    const int d = static_cast<int>(c.d_model);
    auto norm = [&](const std::string& name) { return std::make_unique<LayerNorm>(*at(prefix + name + ".gain"), *at(prefix + name + ".bias"), d); };
    auto block = std::make_unique<Sequence>();
    if (c.mixer != Mixer::none) {
        // pre-norm normalises only what learned attention reads (reference::make_block says why)
        std::unique_ptr<Layer> ln1;
        if (c.norm == Norm::post || (c.norm == Norm::pre && c.mixer == Mixer::learned)) ln1 = norm("ln1");
        std::unique_ptr<Layer> mixer;
        if (c.mixer == Mixer::learned) mixer = std::make_unique<SelfAttention>(at, prefix, c, tables, path, shared_limit);
        else mixer = std::make_unique<UniformAverage>(at, prefix, c, path, shared_limit);
        block->add(sublayer(std::move(ln1), std::move(mixer), c.norm, c.residual, d));
    }
    if (c.d_ff > 0) {
        std::unique_ptr<Layer> ln2;
        if (c.norm != Norm::none) ln2 = norm("ln2");
        block->add(sublayer(std::move(ln2), std::make_unique<FeedForward>(at, prefix, d, static_cast<int>(c.d_ff)), c.norm, c.residual, d));
    }
    return block;
}

// --- the tied readout ------------------------------------------------------------------------------------------------

const float* TiedReadout::forward(const float* h, int B, int T) {
    h_ = h, N_ = B * T;
    float* logits = sized(logits_, rows(B, T) * V_, "logits (N, V)");
    gemm_strided_batched(Op::as_is, Op::transposed, N_, V_, d_, 1.0f, h, d_, 0, wte_.w(), d_, 0, 0.0f, logits, V_, 0, 1);  // h wteᵀ
    return logits;
}

const float* TiedReadout::backward(const float* dlogits) {
    float* dh = sized(dh_, static_cast<std::size_t>(N_) * d_, "TiedReadout dh (N, d)");
    gemm_strided_batched(Op::as_is, Op::as_is, N_, d_, V_, 1.0f, dlogits, V_, 0, wte_.w(), d_, 0, 0.0f, dh, d_, 0, 1);  // dlogits wte
    gemm_strided_batched(Op::transposed, Op::as_is, V_, d_, N_, 1.0f, dlogits, V_, 0, h_, d_, 0, 1.0f, wte_.g(), d_, 0, 1);  // wte.grad += dlogitsᵀ h
    return dh;
}

}  // namespace attn::gpu
