// The GPU model's layers: the reference engine's layers (common/reference/layers.hpp, attention.hpp, model.hpp),
// one for one, on device pointers. Same names, same composition, same order of operations:
//
//   reference::Linear ↔ gpu::Linear         reference::SelfAttention  ↔ gpu::SelfAttention
//   reference::Gelu   ↔ gpu::Gelu           reference::UniformAverage ↔ gpu::UniformAverage
//   reference::LayerNorm ↔ gpu::LayerNorm   reference::FeedForward    ↔ gpu::FeedForward
//   reference::Sequence, Residual ↔ gpu::Sequence, Residual          reference::Block ↔ gpu::Block
//   reference::TiedReadout ↔ gpu::TiedReadout                         make_block ↔ make_block
//
// Every layer has a forward and a backward:
//   forward(x, B, T)  x (B·T, d_in) on the device → y (B·T, d_out), a buffer the layer owns. x must stay valid
//                     until the backward (it is the previous layer's output, which it owns).
//   backward(dy)      dy (B·T, d_out) → dx (B·T, d_in), a buffer the layer owns; *adds* the parameters' gradients.
// Buffers grow when a larger B·T needs more and are never shrunk, so a training loop allocates once. Each call
// launches on the default stream and returns without waiting (train_layers.hpp, attention_train.hpp, ops.hpp).
// Plain C++: no CUDA types, no xtensor; the unit tests compile it unchanged against the kernels' CPU emulation.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention_train.hpp"
#include "buffer.hpp"
#include "core/params.hpp"
#include "fast/block.hpp"
#include "fast/model.hpp"
#include "gpu_model.hpp"  // AttentionPath
#include "launch.hpp"     // AttentionVersion

namespace attn::gpu {

// The buffer, grown to hold `count` floats (never shrunk: the last short batch reuses it); its data.
float* sized(DeviceBuffer& b, std::size_t count, const char* what);

// One parameter on the device: its value, its gradient and AdamW's two moments, beside the host copy.
struct DeviceParam {
    Param* host = nullptr;
    DeviceBuffer value, grad, m, v;
    float* w() { return value.data(); }
    float* g() { return grad.data(); }
};

// The model's parameters by name ("block0.W_q", …): what a layer is built from. `at` throws for a missing name.
using ParamLookup = std::function<DeviceParam*(const std::string& name)>;

// The tables positions read, for the current T: kept by the model, read by its layers at each forward.
struct PositionTables {
    DeviceBuffer sinusoids;     // (T, d), fixed
    DeviceBuffer rope_angles;   // (T, d_k): cos in column 2j, sin in 2j + 1
    DeviceBuffer alibi_slopes;  // (n_heads)
    int T = 0;
    void prepare(const ModelConfig& c, int T);  // (re)made when T changes
};

class Layer {
public:
    virtual ~Layer() = default;
    virtual const float* forward(const float* x, int B, int T) = 0;  // (B·T, d_in) → (B·T, d_out)
    virtual const float* backward(const float* dy) = 0;              // (B·T, d_out) → dx (B·T, d_in)
};

// Whether a product's result replaces what its output holds or is added to it (x reaching q, k and v).
enum class Into { write, add };

// y = x W + b:  x (N, in), W (in, out), b (1, out) or none
class Linear : public Layer {
public:
    Linear(DeviceParam& W, DeviceParam* b, int in, int out) : W_(W), b_(b), in_(in), out_(out) {}
    const float* forward(const float* x, int B, int T) override;
    const float* backward(const float* dy) override;         // W.grad += xᵀ dy;  b.grad += Σ_rows dy;  dx = dy Wᵀ
    void backward_into(const float* dy, float* dx, Into into);  // the same, dx (N, in) written or added to
    const float* output() const { return y_.data(); }            // the last forward's y (N, out)

private:
    DeviceParam& W_;
    DeviceParam* b_;
    int in_, out_, N_ = 0;
    const float* x_ = nullptr;
    DeviceBuffer y_, dx_, sums_;  // sums_: the bias gradient's chunked column sums (past 256 rows)
};

// gelu(x) = x Φ(x), element by element
class Gelu : public Layer {
public:
    explicit Gelu(int d) : d_(d) {}
    const float* forward(const float* x, int B, int T) override;
    const float* backward(const float* dy) override;  // dx = dy ⊙ (Φ(x) + x φ(x))
    const float* output() const { return y_.data(); }  // the last forward's y (N, d)

private:
    int d_, N_ = 0;
    const float* x_ = nullptr;
    DeviceBuffer y_, dx_;
};

// y = gain ⊙ (x − mean) / √(var + eps) + bias, each row on its own
class LayerNorm : public Layer {
public:
    LayerNorm(DeviceParam& gain, DeviceParam& bias, int d) : gain_(gain), bias_(bias), d_(d) {}
    const float* forward(const float* x, int B, int T) override;
    const float* backward(const float* dy) override;
    const float* output() const { return y_.data(); }  // the last forward's y (N, d)

private:
    DeviceParam &gain_, &bias_;
    int d_, N_ = 0;
    const float* x_ = nullptr;
    DeviceBuffer y_, mean_, rstd_, dx_, sums_;  // mean and rstd (N): the row statistics the backward reads; sums_:
                                                 // the chunked column sums of dgain and dbias (past 256 rows)
};

// f, then g, then …: the backward runs them in reverse
class Sequence : public Layer {
public:
    void add(std::unique_ptr<Layer> layer) { layers_.push_back(std::move(layer)); }
    const float* forward(const float* x, int B, int T) override;
    const float* backward(const float* dy) override;

private:
    std::vector<std::unique_ptr<Layer>> layers_;
};

// y = x + f(x): x reaches y twice, so dx = dy + f's backward of dy
class Residual : public Layer {
public:
    Residual(std::unique_ptr<Layer> f, int d) : f_(std::move(f)), d_(d) {}
    const float* forward(const float* x, int B, int T) override;
    const float* backward(const float* dy) override;

private:
    std::unique_ptr<Layer> f_;
    int d_;
    std::size_t n_ = 0;
    DeviceBuffer y_, dx_;
};

// The position-wise FFN: W_2 gelu(x W_1 + b_1) + b_2, through d_ff hidden units
class FeedForward : public Layer {
public:
    FeedForward(const ParamLookup& at, const std::string& prefix, int d_model, int d_ff);
    const float* forward(const float* x, int B, int T) override;  // (N, d_model) → (N, d_ff) → (N, d_model)
    const float* backward(const float* dy) override;
    const float* pre_ff() const { return up_.output(); }    // the last forward's x W_1 + b_1 (N, d_ff)
    const float* hidden() const { return gelu_.output(); }  // and its GELU (N, d_ff)

private:
    Linear up_;
    Gelu gelu_;
    Linear down_;
};

// The attention of split heads, q, k (B·h, T, d_k) and v (B·h, T, d_v) → out (B·h, T, d_v): materialised
// weights or FlashAttention-2 (attention_train.hpp), chosen at each forward for the shape and the device.
// Or, forward only, one of Mục 9.8's three kernels that 11_gpu_block sets side by side (ops.hpp: v1, v2, v3),
// which take causal attention scaled by 1/√d_head and keep nothing for a backward.
class HeadAttention {
public:
    HeadAttention(AttentionPath path, std::size_t shared_limit) : path_(path), shared_limit_(shared_limit) {}
    const float* forward(const float* q, const float* k, const float* v, const AttentionShape& s);
    // dout (B·h, T, d_v) → dq, dk (B·h, T, d_k) and dv (B·h, T, d_v), owned here; refused after a forward-only kernel
    void backward(const float* dout);
    // The forwards from now on run this kernel (none: the training paths again).
    void use_kernel(std::optional<AttentionVersion> version) { kernel_ = version; }
    const float* dq() const { return dq_.data(); }
    const float* dk() const { return dk_.data(); }
    const float* dv() const { return dv_.data(); }
    bool flash() const { return flash_; }

private:
    AttentionPath path_;
    std::size_t shared_limit_;
    std::optional<AttentionVersion> kernel_, ran_kernel_;  // the kernel asked for, and the one the last forward ran
    AttentionShape s_;
    bool flash_ = false;
    const float *q_ = nullptr, *k_ = nullptr, *v_ = nullptr;
    DeviceBuffer out_, weights_, lse_, delta_, dweights_, dq_, dk_, dv_;
};

// Learned weights, h heads:  q, k, v = x W_q, x W_k, x W_v (+ biases); per sequence and head
// weights = softmax(q kᵀ / √d_k + ALiBi's bias, causal mask), head = weights v; heads side by side · W_o (+ b_o).
// RoPE turns q and k before their product.
class SelfAttention : public Layer {
public:
    SelfAttention(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, const PositionTables& tables,
                  AttentionPath path, std::size_t shared_limit);
    const float* forward(const float* x, int B, int T) override;  // (B·T, d_model) → (B·T, d_model)
    const float* backward(const float* dy) override;
    void use_kernel(std::optional<AttentionVersion> version) { attend_.use_kernel(version); }  // HeadAttention's
    // The last forward's q, k, v (B·T, h·d_k), (B·T, d_model) before the heads split, and the heads merged before W_o.
    const float* q() const { return q_proj_.output(); }
    const float* k() const { return k_proj_.output(); }
    const float* v() const { return v_proj_.output(); }
    const float* merged() const { return merged_.data(); }

private:
    const ModelConfig& c_;
    const PositionTables& tables_;
    int d_, h_, d_k_, d_v_, B_ = 0, T_ = 0;
    Linear q_proj_, k_proj_, v_proj_;
    std::optional<Linear> out_proj_;
    HeadAttention attend_;
    DeviceBuffer q_h_, k_h_, v_h_, heads_, merged_, dheads_, dq_, dk_, dv_, dx_;
};

// Mục 9.1's baseline: every position averages the values of its prefix (weights 1/(t+1)); W_v and W_o learned
class UniformAverage : public Layer {
public:
    UniformAverage(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, AttentionPath path, std::size_t shared_limit);
    const float* forward(const float* x, int B, int T) override;
    const float* backward(const float* dy) override;

private:
    const ModelConfig& c_;
    int d_, h_, d_v_, B_ = 0, T_ = 0;
    Linear v_proj_;
    std::optional<Linear> out_proj_;
    HeadAttention attend_;
    DeviceBuffer v_h_, merged_, dheads_, dv_;
};

// The chapter's block, pre-norm (GPT-2):  x = x + attn(ln1(x));  x = x + ffn(ln2(x))
class Block : public Layer {
public:
    Block(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, const PositionTables& tables, AttentionPath path,
          std::size_t shared_limit);
    const float* forward(const float* x, int B, int T) override;  // (B·T, d) → (B·T, d)
    const float* backward(const float* dy) override;
    void use_kernel(std::optional<AttentionVersion> version) { attn_.use_kernel(version); }  // HeadAttention's
    // The last forward's pieces: LN_1(x), the attention, a = x + attention, LN_2(a), the FFN.
    const LayerNorm& ln1() const { return ln1_; }
    const SelfAttention& attention() const { return attn_; }
    const float* a() const { return a_.data(); }
    const LayerNorm& ln2() const { return ln2_; }
    const FeedForward& ffn() const { return ffn_; }

private:
    int d_;
    std::size_t n_ = 0;
    LayerNorm ln1_;
    SelfAttention attn_;
    LayerNorm ln2_;
    FeedForward ffn_;
    DeviceBuffer a_, y_, da_, dx_;  // the two residual sums and their gradients
};

// Block number `prefix` ("block0.") of a model of config c: the chapter's Block, or the ladder's and post-norm's
// pieces composed as reference::make_block composes them.
std::unique_ptr<Layer> make_block(const ParamLookup& at, const std::string& prefix, const ModelConfig& c, const PositionTables& tables,
                                  AttentionPath path, std::size_t shared_limit);

// The readout tied to the token table (GPT-2): logits = h wteᵀ.  h (N, d), wte (V, d) → (N, V)
class TiedReadout : public Layer {
public:
    TiedReadout(DeviceParam& wte, int d, int V) : wte_(wte), d_(d), V_(V) {}
    const float* forward(const float* h, int B, int T) override;
    const float* backward(const float* dlogits) override;  // dh = dlogits wte;  wte.grad += dlogitsᵀ h

private:
    DeviceParam& wte_;
    int d_, V_, N_ = 0;
    const float* h_ = nullptr;
    DeviceBuffer logits_, dh_;
};

// The attention's shape in a model of config c on B sequences of T tokens (uniform weights read no q or k: v
// stands in for them), and whether it takes the flash path (said once on stderr where the card's shared memory
// is too small for it).
AttentionShape attention_shape(const ModelConfig& c, int B, int T, const float* alibi_slopes);
bool takes_flash(AttentionPath path, const AttentionShape& s, std::size_t shared_limit);

}  // namespace attn::gpu
