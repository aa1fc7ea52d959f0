// The CPU model's forward and backward (common/fast/model.cpp, block.cpp), step for step, on the device.
// Each section below mirrors its CPU namesake; the comments give the shapes (N = B·T rows).
#include "gpu_model.hpp"

#include <cmath>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "attention_train.hpp"
#include "attn/error.hpp"
#include "attn/optim.hpp"
#include "attn/positions.hpp"
#include "buffer.hpp"
#include "ops.hpp"
#include "train_layers.hpp"
#include "transformer_gpu.hpp"

namespace attn::gpu {

const char* attention_path_name(AttentionPath path) {
    return path == AttentionPath::flash ? "flash" : path == AttentionPath::materialised ? "materialised" : "automatic";
}

namespace {

// One parameter on the device: its value, its gradient and AdamW's two moments, beside the host copy.
struct DeviceParam {
    Param* host = nullptr;
    DeviceBuffer value, grad, m, v;
    float* w() { return value.data(); }
    float* g() { return grad.data(); }
};

// Activations by name, allocated on first use and grown when a larger B or T needs more (never shrunk, so that
// evaluation's last short batch or sampling's one-more-token forwards reuse them).
class Activations {
public:
    float* get(const std::string& name, std::size_t count) {
        DeviceBuffer& b = buffers_[name];
        if (b.size() < count) b = DeviceBuffer(count, name);
        return b.data();
    }
    // The first `count` floats of one of them, to the host (logits() reads the logits this way).
    void download(const std::string& name, float* host, std::size_t count) const {
        const auto it = buffers_.find(name);
        require(it != buffers_.end() && it->second.size() >= count, "GpuModel", "no activation " + name + " of " + std::to_string(count) + " floats");
        it->second.download(host, count);
    }

private:
    std::map<std::string, DeviceBuffer> buffers_;
};

// Whether a product's result replaces what its output holds or is added to it (a gradient reaching x by
// several paths: q, k and v).
enum class Into { write, add };

// y (N, out) = x (N, in) W (in, out) + b: one SGEMM and a bias add.
void linear_forward(const float* x, DeviceParam& W, DeviceParam* b, float* y, int N, int in, int out) {
    gemm_strided_batched(Op::as_is, Op::as_is, N, out, in, 1.0f, x, in, 0, W.w(), out, 0, 0.0f, y, out, 0, 1);
    if (b) bias_add(y, b->w(), static_cast<std::size_t>(N), out);
}

// dy (N, out) → W.grad += xᵀ dy, b.grad += Σ_rows dy, and dx (N, in) = dy Wᵀ, written or added; dx may be null.
void linear_backward(const float* x, const float* dy, DeviceParam& W, DeviceParam* b, float* dx, Into into, int N, int in,
                     int out) {
    gemm_strided_batched(Op::transposed, Op::as_is, in, out, N, 1.0f, x, in, 0, dy, out, 0, 1.0f, W.g(), out, 0, 1);
    if (b) bias_backward(dy, b->g(), N, out);
    if (dx)
        gemm_strided_batched(Op::as_is, Op::transposed, N, in, out, 1.0f, dy, out, 0, W.w(), out, 0, into == Into::add ? 1.0f : 0.0f,
                             dx, in, 0, 1);
}

// A LayerNorm: its two parameters and the row statistics its backward reads.
struct DeviceLayerNorm {
    DeviceParam *gain = nullptr, *bias = nullptr;
    const float* in = nullptr;  // the input of the last forward, kept by whoever wrote it
    float* forward(const float* x, Activations& acts, const std::string& name, int N, int d) {
        in = x;
        float* y = acts.get(name, static_cast<std::size_t>(N) * d);
        layernorm_forward(x, gain->w(), bias->w(), y, acts.get(name + ".mean", N), acts.get(name + ".rstd", N), N, d);
        return y;
    }
    float* backward(const float* dy, Activations& acts, const std::string& name, int N, int d) {
        float* dx = acts.get("d" + name, static_cast<std::size_t>(N) * d);
        layernorm_backward(dy, in, gain->w(), acts.get(name + ".mean", N), acts.get(name + ".rstd", N), dx, gain->g(),
                           bias->g(), N, d);
        return dx;
    }
};

// The attention's shape in a block of configuration c, on B sequences of T tokens (uniform weights read no q or
// k: v stands in for them), and whether it takes the flash path.
AttentionShape attention_shape(const BlockConfig& c, int B, int T, const float* alibi_slopes) {
    const int h = static_cast<int>(c.attention.n_heads), d_v = static_cast<int>(c.attention.d_model) / h;
    const bool learned = c.mixer == Mixer::learned;
    const int d_k = learned && c.attention.d_k ? static_cast<int>(c.attention.d_k) : d_v;
    return {.B = B, .n_heads = h, .T = T, .d_k = d_k, .d_v = d_v, .weighting = learned ? Weighting::learned : Weighting::uniform,
            .causal = c.attention.causal, .scale = c.attention.scale ? 1.0f / std::sqrt(static_cast<float>(d_k)) : 1.0f,
            .alibi_slopes = alibi_slopes};
}
// The flash path where asked for; automatically, where the shape allows it and its blocks' shared memory fits
// the device's per-block limit (said once, on stderr, when it does not: a consumer card at d_head 65–128).
bool takes_flash(AttentionPath path, const AttentionShape& s, std::size_t shared_limit) {
    if (path != AttentionPath::automatic) return path == AttentionPath::flash;
    if (!flash_supports(s)) return false;
    const std::string why = flash_shared_refusal(s.d_k, shared_limit);
    if (why.empty()) return true;
    static std::once_flag said;
    std::call_once(said, [&] { std::cerr << "GpuModel: " << why << ": attention takes the materialised path\n"; });
    return false;
}

// --- the block (attn::Block) ------------------------------------------------------------------------------------
struct GpuBlock {
    BlockConfig c;
    int d = 0, h = 0, d_k = 0, d_v = 0, d_ff = 0;
    std::optional<DeviceLayerNorm> ln1, ln2;
    DeviceParam *W_q = nullptr, *b_q = nullptr, *W_k = nullptr, *b_k = nullptr, *W_v = nullptr, *b_v = nullptr;
    DeviceParam *W_o = nullptr, *b_o = nullptr, *W_1 = nullptr, *b_1 = nullptr, *W_2 = nullptr, *b_2 = nullptr;
    Activations acts;
    // what the backward reads, from the last forward
    int B = 0, T = 0;
    bool flash = false;
    const float *x = nullptr, *ain = nullptr, *fin = nullptr;
    const float* rope = nullptr;  // RoPE's angles (T, d_k), or null
    AttentionShape shape;

    bool learned() const { return c.mixer == Mixer::learned; }
    bool pre() const { return c.norm == Norm::pre; }
    bool post() const { return c.norm == Norm::post; }

    // (N, d) → (N, d); x stays valid until the backward (the previous block's output, or the embeddings).
    // shared_limit: the device's per-block shared memory (device_shared_bytes_per_block), for the path's choice.
    const float* forward(const float* x_in, int B_, int T_, const float* rope_angles, const float* alibi_slopes,
                         AttentionPath path, std::size_t shared_limit) {
        B = B_, T = T_, x = x_in, rope = rope_angles;
        const int N = B * T;
        const std::size_t Nd = static_cast<std::size_t>(N) * d;
        const float* a = x;
        if (c.mixer != Mixer::none) {
            ain = pre() && ln1 ? ln1->forward(x, acts, "ln1", N, d) : x;  // (N, d)
            const float* s1 = attention_forward(ain, rope_angles, alibi_slopes, path, shared_limit);  // without the residual: a = MHA(x)
            if (c.residual) {  // the first residual sum
                float* sum = acts.get("s1", Nd);
                residual_add(x, s1, sum, Nd);
                s1 = sum;
            }
            a = post() ? ln1->forward(s1, acts, "a", N, d) : s1;
        }
        const float* y = a;
        if (d_ff > 0) {
            fin = pre() ? ln2->forward(a, acts, "ln2", N, d) : a;  // (N, d)
            float* pre_ff = acts.get("pre_ff", static_cast<std::size_t>(N) * d_ff);
            float* hidden = acts.get("hidden", static_cast<std::size_t>(N) * d_ff);
            linear_forward(fin, *W_1, b_1, pre_ff, N, d, d_ff);  // (N, d_ff)
            gelu(pre_ff, hidden, static_cast<std::size_t>(N) * d_ff);
            float* s2 = acts.get("s2", Nd);
            linear_forward(hidden, *W_2, b_2, s2, N, d_ff, d);  // (N, d)
            if (c.residual) residual_add(a, s2, s2, Nd);
            y = post() ? ln2->forward(s2, acts, "y", N, d) : s2;
        }
        return y;
    }

    // dy (N, d) → dx (N, d), accumulating every weight's gradient.
    const float* backward(const float* dy) {
        const int N = B * T;
        const std::size_t Nd = static_cast<std::size_t>(N) * d;
        const float* da = dy;
        if (d_ff > 0) {
            const float* ds2 = post() ? ln2->backward(dy, acts, "y", N, d) : dy;  // through y = LN_2(s2)
            float* dhidden = acts.get("dhidden", static_cast<std::size_t>(N) * d_ff);
            linear_backward(acts.get("hidden", static_cast<std::size_t>(N) * d_ff), ds2, *W_2, b_2, dhidden, Into::write, N, d_ff, d);
            gelu_backward(acts.get("pre_ff", static_cast<std::size_t>(N) * d_ff), dhidden, dhidden, static_cast<std::size_t>(N) * d_ff);
            float* dfin = acts.get("dfin", Nd);
            linear_backward(fin, dhidden, *W_1, b_1, dfin, Into::write, N, d, d_ff);
            float* dffn_in = pre() ? ln2->backward(dfin, acts, "ln2", N, d) : dfin;
            if (c.residual) add_inplace(dffn_in, ds2, Nd);
            da = dffn_in;
        }
        if (c.mixer == Mixer::none) return da;
        const float* ds1 = post() ? ln1->backward(da, acts, "a", N, d) : da;
        float* dain = attention_backward(ds1);
        float* dx = pre() && ln1 ? ln1->backward(dain, acts, "ln1", N, d) : dain;
        if (c.residual) add_inplace(dx, ds1, Nd);
        return dx;
    }

    // --- attention (attn::MultiHeadAttention) ---------------------------------------------------------------
    const float* attention_forward(const float* in, const float* rope_angles, const float* alibi_slopes, AttentionPath path,
                                   std::size_t shared_limit) {
        const int N = B * T, BH = B * h;
        float* v = acts.get("v", static_cast<std::size_t>(N) * d);
        linear_forward(in, *W_v, b_v, v, N, d, d);  // (N, d)
        float* v_h = acts.get("v_h", static_cast<std::size_t>(N) * d);
        split_heads(v, v_h, B, T, h, d_v);  // (B·h, T, d_v)
        const float *q_h = v_h, *k_h = v_h;  // uniform weights read no queries or keys
        if (learned()) {
            const std::size_t nqk = static_cast<std::size_t>(N) * h * d_k;
            float* q = acts.get("q", nqk);
            float* k = acts.get("k", nqk);
            linear_forward(in, *W_q, b_q, q, N, d, h * d_k);  // (N, h·d_k)
            linear_forward(in, *W_k, b_k, k, N, d, h * d_k);
            if (rope_angles) rope_rotate(q, rope_angles, B, T, h, d_k, 1.0f), rope_rotate(k, rope_angles, B, T, h, d_k, 1.0f);
            float* qs = acts.get("q_h", nqk);
            float* ks = acts.get("k_h", nqk);
            split_heads(q, qs, B, T, h, d_k);  // (B·h, T, d_k)
            split_heads(k, ks, B, T, h, d_k);
            q_h = qs, k_h = ks;
        }
        shape = attention_shape(c, B, T, alibi_slopes);
        flash = takes_flash(path, shape, shared_limit);
        if (flash && !flash_supports(shape))  // asked for (AttentionPath::flash) on a shape it does not take
            throw Error("GpuModel: the flash path does not take this block's attention (" + std::string(learned() ? "" : "uniform weights, ") +
                        (c.attention.causal ? "" : "no mask, ") + "d_k " + std::to_string(d_k) + ", d_v " + std::to_string(d_v) + ")");
        if (flash && flash_shared_bytes(d_k) > shared_limit)  // asked for on a card whose blocks it does not fit
            throw Error("GpuModel: AttentionPath::flash: " + flash_shared_refusal(d_k, shared_limit) +
                        "; take the materialised or the automatic path");
        float* out_h = acts.get("out_h", static_cast<std::size_t>(N) * d);  // (B·h, T, d_v)
        if (flash)
            attention_forward_flash(q_h, k_h, v_h, out_h, acts.get("lse", static_cast<std::size_t>(BH) * T), shape);
        else
            attention_forward_materialised(q_h, k_h, v_h, out_h, acts.get("weights", static_cast<std::size_t>(BH) * T * T), shape);
        float* heads = acts.get("heads", static_cast<std::size_t>(N) * d);
        merge_heads(out_h, heads, B, T, h, d_v);  // (N, d)
        if (!W_o) return heads;
        float* m = acts.get("m", static_cast<std::size_t>(N) * d);
        linear_forward(heads, *W_o, b_o, m, N, d, d);
        return m;
    }

    // dm (N, d) → d(in) (N, d)
    float* attention_backward(const float* dm) {
        const int N = B * T, BH = B * h;
        const std::size_t Nd = static_cast<std::size_t>(N) * d, nqk = static_cast<std::size_t>(N) * h * d_k;
        const float* dheads = dm;
        if (W_o) {
            float* dh = acts.get("dheads", Nd);
            linear_backward(acts.get("heads", Nd), dm, *W_o, b_o, dh, Into::write, N, d, d);
            dheads = dh;
        }
        float* dout_h = acts.get("dout_h", Nd);
        split_heads(dheads, dout_h, B, T, h, d_v);  // (B·h, T, d_v)
        float* v_h = acts.get("v_h", Nd);
        const float* q_h = learned() ? acts.get("q_h", nqk) : v_h;
        const float* k_h = learned() ? acts.get("k_h", nqk) : v_h;
        float* dq_h = acts.get("dq_h", learned() ? nqk : Nd);
        float* dk_h = acts.get("dk_h", learned() ? nqk : Nd);
        float* dv_h = acts.get("dv_h", Nd);
        if (flash)
            attention_backward_flash(q_h, k_h, v_h, acts.get("out_h", Nd), acts.get("lse", static_cast<std::size_t>(BH) * T), dout_h,
                                     dq_h, dk_h, dv_h, acts.get("delta", static_cast<std::size_t>(BH) * T), shape);
        else
            attention_backward_materialised(q_h, k_h, v_h, acts.get("weights", static_cast<std::size_t>(BH) * T * T), dout_h, dq_h,
                                            dk_h, dv_h, acts.get("dweights", static_cast<std::size_t>(BH) * T * T), shape);
        float* dv = acts.get("dv", Nd);
        merge_heads(dv_h, dv, B, T, h, d_v);  // (N, d)
        float* dain = acts.get("dain", Nd);
        if (!learned()) {
            linear_backward(ain, dv, *W_v, b_v, dain, Into::write, N, d, d);
            return dain;
        }
        float* dq = acts.get("dq", nqk);
        float* dk = acts.get("dk", nqk);
        merge_heads(dq_h, dq, B, T, h, d_k);  // (N, h·d_k)
        merge_heads(dk_h, dk, B, T, h, d_k);
        if (rope) rope_rotate(dq, rope, B, T, h, d_k, -1.0f), rope_rotate(dk, rope, B, T, h, d_k, -1.0f);  // Rᵀ
        linear_backward(ain, dq, *W_q, b_q, dain, Into::write, N, d, h * d_k);  // x feeds q, k and v
        linear_backward(ain, dk, *W_k, b_k, dain, Into::add, N, d, h * d_k);
        linear_backward(ain, dv, *W_v, b_v, dain, Into::add, N, d, d);
        return dain;
    }

};

}  // namespace

// --- the model (attn::Model) ----------------------------------------------------------------------------------------
struct GpuModel::Impl {
    Impl(const ModelConfig& config, AttentionPath p) : c(config), path(p), shared_limit(device_shared_bytes_per_block()) {}
    const ModelConfig& c;  // the host model's
    AttentionPath path;
    std::size_t shared_limit;  // the most shared memory a block may have on this device: decides the automatic path
    std::vector<DeviceParam> params;  // in the host's params().all() order
    std::map<std::string, DeviceParam*> by_name;
    std::vector<GpuBlock> blocks;
    std::optional<DeviceLayerNorm> lnf;
    DeviceParam *wte = nullptr, *wpe = nullptr, *W_out = nullptr, *b_out = nullptr;
    Activations acts;
    DeviceInts tokens, targets;
    std::vector<int> host_tokens;  // the last forward's, grouped by token for the embedding's backward
    TokenGroups groups;            // host_tokens grouped, on the device (buffers kept from step to step)
    std::optional<GradClip> clip;  // the gradient clipping's scratch, made at the first clipped update
    std::vector<const float*> grad_ptrs;  // every gradient buffer, in the params' order, for the clip
    int B = 0, T = 0, counted = 0;
    const float* top = nullptr;  // the last block's output
    const float* ntop = nullptr;  // LN_f(top) under pre-norm, else top
    // fixed tables for the current T
    int table_T = 0;
    DeviceBuffer sinusoids, rope_angles, alibi_slopes;

    DeviceParam* find(const std::string& name) {
        const auto it = by_name.find(name);
        return it == by_name.end() ? nullptr : it->second;
    }
    DeviceParam& at(const std::string& name) {
        DeviceParam* p = find(name);
        require(p != nullptr, "GpuModel", "no parameter named " + name);
        return *p;
    }

    void prepare_tables(int T_) {
        if (table_T == T_) return;
        table_T = T_;
        const std::size_t d = c.d_model;
        if (c.positions == Positions::sinusoidal) {
            sinusoids = to_device(sinusoidal_table(static_cast<std::size_t>(T_), d), "the sinusoidal table (T, d)");  // fixed
        }
        if (c.positions == Positions::rope)  // the CPU attention's angles, (T, d_k)
            rope_angles = to_device(attn::rope_angles(static_cast<std::size_t>(T_), c.d_k ? c.d_k : d / c.n_heads), "RoPE's angles (T, d_k)");
        if (c.positions == Positions::alibi && alibi_slopes.size() == 0) {
            const std::vector<double> slopes = attn::alibi_slopes(c.n_heads);
            std::vector<float> f(slopes.begin(), slopes.end());
            alibi_slopes = DeviceBuffer(f.size(), "ALiBi's slopes (n_heads)");
            alibi_slopes.upload(f.data(), f.size());
        }
    }
};

GpuModel::GpuModel(const ModelConfig& config, std::uint64_t seed, AttentionPath path)
    : host_(config, seed), impl_(std::make_unique<Impl>(host_.config(), path)) {
    Impl& m = *impl_;
    m.params.resize(host_.params().all().size());
    std::size_t i = 0;
    for (Param& p : host_.params().all()) {
        DeviceParam& dp = m.params[i++];
        dp.host = &p;
        dp.value = DeviceBuffer(p.value.size(), p.name);
        dp.value.upload(p.value.data(), p.value.size());
        dp.grad = DeviceBuffer(p.value.size(), p.name + ".grad");
        dp.m = DeviceBuffer(p.value.size(), "adam_m." + p.name);
        dp.v = DeviceBuffer(p.value.size(), "adam_v." + p.name);
        dp.grad.zero(), dp.m.zero(), dp.v.zero();
        m.by_name[p.name] = &dp;
    }
    m.wte = &m.at("wte"), m.wpe = m.find("wpe"), m.W_out = m.find("W_out"), m.b_out = m.find("b_out");
    const int d = static_cast<int>(config.d_model), h = static_cast<int>(config.n_heads);
    m.blocks.resize(config.n_layers);
    for (std::size_t l = 0; l < config.n_layers; ++l) {
        GpuBlock& b = m.blocks[l];
        const std::string p = "block" + std::to_string(l) + ".";
        b.c = {.attention = {.d_model = config.d_model, .n_heads = config.n_heads, .d_k = config.d_k, .mixer = config.mixer,
                             .positions = config.positions, .scale = config.scale, .causal = config.causal,
                             .biases = config.biases, .output_projection = config.output_projection,
                             .output_bias = config.output_bias},
               .mixer = config.mixer, .d_ff = config.d_ff, .norm = config.norm, .residual = config.residual};
        b.d = d, b.h = h, b.d_v = d / h, b.d_k = config.d_k ? static_cast<int>(config.d_k) : d / h;
        b.d_ff = static_cast<int>(config.d_ff);
        if (m.find(p + "ln1.gain")) b.ln1 = DeviceLayerNorm{&m.at(p + "ln1.gain"), &m.at(p + "ln1.bias")};
        if (m.find(p + "ln2.gain")) b.ln2 = DeviceLayerNorm{&m.at(p + "ln2.gain"), &m.at(p + "ln2.bias")};
        b.W_q = m.find(p + "W_q"), b.b_q = m.find(p + "b_q"), b.W_k = m.find(p + "W_k"), b.b_k = m.find(p + "b_k");
        b.W_v = m.find(p + "W_v"), b.b_v = m.find(p + "b_v"), b.W_o = m.find(p + "W_o"), b.b_o = m.find(p + "b_o");
        b.W_1 = m.find(p + "W_1"), b.b_1 = m.find(p + "b_1"), b.W_2 = m.find(p + "W_2"), b.b_2 = m.find(p + "b_2");
        require(config.mixer == Mixer::none || b.W_v, "GpuModel", "block " + std::to_string(l) + " has attention but no W_v");
        require(config.d_ff == 0 || (b.W_1 && b.W_2), "GpuModel", "block " + std::to_string(l) + " has an FFN but no W_1, W_2");
    }
    if (m.find("lnf.gain")) m.lnf = DeviceLayerNorm{&m.at("lnf.gain"), &m.at("lnf.bias")};
}

GpuModel::~GpuModel() = default;

AttentionPath GpuModel::attention_path(std::size_t B, std::size_t T) const {
    const Impl& m = *impl_;
    if (m.blocks.empty() || m.c.mixer == Mixer::none) return AttentionPath::materialised;  // no attention at all
    const AttentionShape s = attention_shape(m.blocks.front().c, static_cast<int>(B), static_cast<int>(T), nullptr);
    return takes_flash(m.path, s, m.shared_limit) ? AttentionPath::flash : AttentionPath::materialised;
}

double GpuModel::forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) {
    Impl& m = *impl_;
    const ModelConfig& c = m.c;
    // Everything checked before anything runs, as the CPU model's layers check it.
    require(B > 0 && T > 0 && tokens.size() == B * T && targets.size() == B * T, "GpuModel::forward",
            std::to_string(tokens.size()) + " tokens and " + std::to_string(targets.size()) + " targets for B·T = " +
                std::to_string(B) + "·" + std::to_string(T) + " (both positive)");
    require(T <= c.max_T, "GpuModel::forward", "T = " + std::to_string(T) + " exceeds max_T = " + std::to_string(c.max_T));
    // Every token and target, checked without building a message until one fails: this loop sees each token of
    // every step.
    int counted = 0;
    const int vocab = static_cast<int>(c.vocab);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] < 0 || tokens[i] >= vocab)
            throw Error("GpuModel::forward: token " + std::to_string(tokens[i]) + " at " + std::to_string(i) +
                        " is outside the vocabulary of " + std::to_string(c.vocab));
        if (targets[i] < -1 || targets[i] >= vocab)
            throw Error("GpuModel::forward: target " + std::to_string(targets[i]) + " at " + std::to_string(i) +
                        " is outside the vocabulary of " + std::to_string(c.vocab) + " (−1: not scored)");
        counted += targets[i] >= 0;
    }
    require(counted > 0, "GpuModel::forward", "no target to score (every target is −1)");
    m.B = static_cast<int>(B), m.T = static_cast<int>(T), m.counted = counted;
    const int N = m.B * m.T, d = static_cast<int>(c.d_model), V = static_cast<int>(c.vocab);
    const std::size_t Nd = static_cast<std::size_t>(N) * d;
    if (m.tokens.size() != tokens.size()) m.tokens = DeviceInts(tokens.size(), "tokens (B·T)"), m.targets = DeviceInts(tokens.size(), "targets (B·T)");
    m.tokens.upload(tokens.data(), tokens.size());
    m.targets.upload(targets.data(), targets.size());
    m.host_tokens = tokens;
    // The embedding backward's token groups, uploaded here, where the host waits for the copies anyway: in the
    // backward they would stall the queued kernels while the host sorts.
    group_tokens(m.host_tokens, m.groups);
    m.prepare_tables(m.T);

    float* x0 = m.acts.get("x0", Nd);  // (N, d) = wte[token] + position
    embedding_forward(m.tokens.data(), m.wte->w(), m.wpe ? m.wpe->w() : nullptr,
                      c.positions == Positions::sinusoidal ? m.sinusoids.data() : nullptr, x0, m.B, m.T, d, V);
    const float* x = x0;
    const float* rope = c.positions == Positions::rope ? m.rope_angles.data() : nullptr;
    const float* alibi = c.positions == Positions::alibi ? m.alibi_slopes.data() : nullptr;
    for (GpuBlock& b : m.blocks) x = b.forward(x, m.B, m.T, rope, alibi, m.path, m.shared_limit);  // (N, d)
    m.top = x;
    m.ntop = m.lnf ? m.lnf->forward(m.top, m.acts, "lnf", N, d) : m.top;
    float* logits = m.acts.get("logits", static_cast<std::size_t>(N) * V);  // (N, V)
    if (m.W_out)
        linear_forward(m.ntop, *m.W_out, m.b_out, logits, N, d, V);
    else  // tied: logits = ntop wteᵀ
        gemm_strided_batched(Op::as_is, Op::transposed, N, V, d, 1.0f, m.ntop, d, 0, m.wte->w(), d, 0, 0.0f, logits, V, 0, 1);
    logits_fresh_ = false;
    return cross_entropy(logits, m.targets.data(), m.acts.get("losses", N), m.acts.get("dlogits", static_cast<std::size_t>(N) * V),
                         N, V, m.counted);
}

void GpuModel::backward() {
    Impl& m = *impl_;
    require(m.B > 0, "GpuModel::backward", "no forward has run yet");
    const int N = m.B * m.T, d = static_cast<int>(m.c.d_model), V = static_cast<int>(m.c.vocab);
    const std::size_t Nd = static_cast<std::size_t>(N) * d;
    const float* dlogits = m.acts.get("dlogits", static_cast<std::size_t>(N) * V);  // (N, V), from the fused cross-entropy
    float* dtop = m.acts.get("dtop", Nd);
    if (m.W_out)
        linear_backward(m.ntop, dlogits, *m.W_out, m.b_out, dtop, Into::write, N, d, V);
    else {  // dntop = dlogits wte; wte.grad += dlogitsᵀ ntop
        gemm_strided_batched(Op::as_is, Op::as_is, N, d, V, 1.0f, dlogits, V, 0, m.wte->w(), d, 0, 0.0f, dtop, d, 0, 1);
        gemm_strided_batched(Op::transposed, Op::as_is, V, d, N, 1.0f, dlogits, V, 0, m.ntop, d, 0, 1.0f, m.wte->g(), d, 0, 1);
    }
    const float* dx = m.lnf ? m.lnf->backward(dtop, m.acts, "lnf", N, d) : dtop;
    for (std::size_t l = m.blocks.size(); l-- > 0;) dx = m.blocks[l].backward(dx);
    embedding_backward(m.groups, dx, m.wte->g(), m.wpe ? m.wpe->g() : nullptr, m.B, m.T, d);  // the sinusoidal table is fixed
}

const Mat& GpuModel::logits() const {
    if (!logits_fresh_) {
        const Impl& m = *impl_;
        const std::size_t N = static_cast<std::size_t>(m.B) * m.T, V = m.c.vocab;
        require(N > 0, "GpuModel::logits", "no forward has run yet");
        logits_ = Mat::from_shape({N, V});
        m.acts.download("logits", logits_.data(), logits_.size());
        logits_fresh_ = true;
    }
    return logits_;
}

void GpuModel::zero_grad() {
    for (DeviceParam& p : impl_->params) p.grad.zero();
}

void GpuModel::update(AdamW& opt, double clip) {
    Impl& m = *impl_;
    // attn::clip_grad_norm on the device: the global L2 norm over every gradient, in the tensors' order, and the
    // factor each gradient is multiplied by, which the update reads (nothing comes back to the host).
    const float* grad_scale = nullptr;
    if (clip > 0) {
        if (!m.clip) {  // the gradients' buffers never move: their pointers are taken once, with the scratch
            std::vector<std::size_t> sizes;
            for (DeviceParam& p : m.params) sizes.push_back(p.grad.size()), m.grad_ptrs.push_back(p.g());
            m.clip.emplace(sizes);
        }
        m.clip->compute(m.grad_ptrs, clip);
        grad_scale = m.clip->scale();
    }
    if (opt.steps_taken() == 0)  // a fresh optimizer (a new train_loop) starts from zero moments, as on the CPU
        for (DeviceParam& p : m.params) p.m.zero(), p.v.zero();
    const AdamWConfig& oc = opt.config();
    const AdamW::StepScalars s = opt.count_step();  // t, lr and the bias corrections, as AdamW::step computes them
    for (DeviceParam& p : m.params)
        adamw_update(p.w(), p.g(), p.m.data(), p.v.data(), p.value.size(), s.lr, oc.beta1, oc.beta2, oc.eps,
                     p.host->decay ? oc.weight_decay : 0.0f, s.bc1, s.bc2, grad_scale);
}

void GpuModel::sync_to_host(AdamW* opt) {
    Impl& m = *impl_;
    std::vector<Mat> ms, vs;
    for (DeviceParam& p : m.params) {
        p.value.download(p.host->value.data(), p.host->value.size());
        if (opt) {
            ms.push_back(Mat::from_shape(p.host->value.shape()));
            vs.push_back(Mat::from_shape(p.host->value.shape()));
            p.m.download(ms.back().data(), ms.back().size());
            p.v.download(vs.back().data(), vs.back().size());
        }
    }
    if (opt) opt->restore(opt->steps_taken(), std::move(ms), std::move(vs));
}

void GpuModel::sync_from_host(const AdamW* opt) {
    Impl& m = *impl_;
    std::size_t k = 0;
    for (DeviceParam& p : m.params) {
        p.value.upload(p.host->value.data(), p.host->value.size());
        if (opt) {
            p.m.upload(opt->first_moments()[k].data(), p.value.size());
            p.v.upload(opt->second_moments()[k].data(), p.value.size());
        }
        ++k;
    }
}

void GpuModel::wait() { synchronize(); }

std::vector<Mat> GpuModel::gradients() const {
    std::vector<Mat> g;
    for (const DeviceParam& p : impl_->params) {
        g.push_back(Mat::from_shape(p.host->value.shape()));
        p.grad.download(g.back().data(), g.back().size());
    }
    return g;
}

}  // namespace attn::gpu
