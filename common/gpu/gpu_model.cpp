// The reference engine's language model (common/reference/model.cpp) on the device: the embeddings, the blocks
// (model_layers.hpp: the reference layers, one for one), LN_f, the readout and the fused cross-entropy; then
// AdamW on every tensor. The comments give the shapes (N = B·T rows).
#include "gpu_model.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "buffer.hpp"
#include "core/error.hpp"
#include "launch.hpp"
#include "model_layers.hpp"
#include "ops.hpp"
#include "train/optim.hpp"
#include "train_layers.hpp"

namespace attn::gpu {

const char* attention_path_name(AttentionPath path) {
    return path == AttentionPath::flash ? "flash" : path == AttentionPath::materialised ? "materialised" : "automatic";
}

// --- the model (reference::Model) ---------------------------------------------------------------------------------
struct GpuModel::Impl {
    Impl(const ModelConfig& config, const GpuSettings& s)
        : c(config), path(s.attention), matmul(s.matmul), launches(s.launches), shared_limit(device_shared_bytes_per_block()) {}
    const ModelConfig& c;  // the host model's
    AttentionPath path;
    Matmul matmul;  // set before each forward and backward: another model may have set another
    Launches launches;
    std::size_t shared_limit;  // the most shared memory a block may have on this device: decides the automatic path
    std::vector<DeviceParam> params;  // in the host's params().all() order
    std::map<std::string, DeviceParam*> by_name;
    DeviceParam *wte = nullptr, *wpe = nullptr;
    PositionTables tables;  // for the current T
    std::vector<std::unique_ptr<Layer>> blocks;
    std::optional<LayerNorm> lnf;
    std::unique_ptr<Layer> readout;  // Linear (W_out, b_out), or TiedReadout
    DeviceBuffer x0, losses, dlogits;
    const float* logits = nullptr;  // (N, V), the readout's, after a forward
    DeviceInts tokens, targets;
    std::vector<int> host_tokens;  // the last forward's, grouped by token for the embedding's backward
    TokenGroups groups;            // host_tokens grouped, on the device (buffers kept from step to step)
    std::optional<TensorGroup> group;  // every parameter, for the gradients' zeroing, clipping and AdamW (a launch or two each)
    // The group, made at first use: the buffers never move after the model is built, so their pointers are taken once.
    TensorGroup& tensors() {
        if (!group) {
            std::vector<TensorGroup::Tensor> all;
            for (DeviceParam& p : params)
                all.push_back({.w = p.w(), .g = p.g(), .m = p.m.data(), .v = p.v.data(), .n = p.value.size(), .decay = p.host->decay});
            group.emplace(all);
        }
        return *group;
    }
    int B = 0, T = 0, counted = 0;
    const float* dx0 = nullptr;  // the first block's input gradient (N, d), for the embedding's backward

    // Launches::graph: the forward's and the backward's device work, each recorded as a CUDA Graph at its second run
    // for a batch's shape (the first allocates the buffers the recording then keeps) and replayed after. A new
    // shape — B, T, or the count of scored targets, which the cross-entropy's kernel is passed — drops both, and so
    // does any device allocation since they were made (a buffer anyone replaced may be one a recording points into).
    struct Recorded {
        DeviceGraph graph;
        bool warm = false;  // ran once at this shape
    } forward_work, backward_work;
    int recorded_B = 0, recorded_T = 0, recorded_counted = 0;
    long long recorded_allocations = -1;
    void run(Recorded& r, const std::function<void()>& work) {
        if (launches == Launches::eager || sync_every_launch()) return work();  // ATTN_GPU_SYNC waits after each launch
        if (B != recorded_B || T != recorded_T || counted != recorded_counted || device_work().allocations != recorded_allocations) {
            forward_work = {}, backward_work = {};
            recorded_B = B, recorded_T = T, recorded_counted = counted;
        }
        if (!r.warm) {
            r.warm = true;
            work();
            recorded_allocations = device_work().allocations;  // what this first run allocated is the recordings' to keep
            return;
        }
        if (r.graph.empty()) r.graph.capture(work);
        r.graph.launch();
    }
    // The products' precision for the duration of one call: this model's, then fp32 again for everyone else
    // (GpuTransformer, ops.hpp's linear) whatever happens.
    struct Precision {
        explicit Precision(Matmul m) { set_matmul(m); }
        ~Precision() {
            try {
                set_matmul(Matmul::fp32);
            } catch (...) {  // already failing: the first error is the one reported
            }
        }
    };

    DeviceParam* find(const std::string& name) {
        const auto it = by_name.find(name);
        return it == by_name.end() ? nullptr : it->second;
    }
    DeviceParam* at(const std::string& name) {  // a parameter the reference engine's layer of that name has
        DeviceParam* p = find(name);
        require(p != nullptr, "GpuModel", "no parameter named " + name + " (the CPU model made none)");
        return p;
    }
};

GpuModel::GpuModel(const ModelConfig& config, std::uint64_t seed, const GpuSettings& settings)
    : host_(config, seed), impl_(std::make_unique<Impl>(host_.config(), settings)) {
    Impl& m = *impl_;
    const ModelConfig& c = m.c;  // with d_k resolved
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
    const ParamLookup at = [&m](const std::string& name) { return m.at(name); };
    m.wte = m.at("wte");
    if (c.positions == Positions::learned) m.wpe = m.at("wpe");
    const int d = static_cast<int>(c.d_model);
    for (std::size_t l = 0; l < c.n_layers; ++l)
        m.blocks.push_back(make_block(at, "block" + std::to_string(l) + ".", c, m.tables, m.path, m.shared_limit));
    if (c.norm == Norm::pre) m.lnf.emplace(*m.at("lnf.gain"), *m.at("lnf.bias"), d);
    if (c.head == Head::untied) m.readout = std::make_unique<Linear>(*m.at("W_out"), m.find("b_out"), d, static_cast<int>(c.vocab));
    else m.readout = std::make_unique<TiedReadout>(*m.wte, d, static_cast<int>(c.vocab));
}

GpuModel::~GpuModel() = default;

AttentionPath GpuModel::attention_path(std::size_t B, std::size_t T) const {
    const Impl& m = *impl_;
    if (m.c.mixer == Mixer::none) return AttentionPath::materialised;  // no attention at all
    const AttentionShape s = attention_shape(m.c, static_cast<int>(B), static_cast<int>(T), nullptr);
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
    const int N = m.B * m.T, d = static_cast<int>(c.d_model), V = vocab;
    if (m.tokens.size() != tokens.size()) m.tokens = DeviceInts(tokens.size(), "tokens (B·T)"), m.targets = DeviceInts(tokens.size(), "targets (B·T)");
    m.tokens.upload(tokens.data(), tokens.size());
    m.targets.upload(targets.data(), targets.size());
    m.host_tokens = tokens;
    // The embedding backward's token groups, uploaded here, where the host waits for the copies anyway: in the
    // backward they would stall the queued kernels while the host sorts.
    group_tokens(m.host_tokens, m.groups);
    m.tables.prepare(c, m.T);
    const Impl::Precision precision(m.matmul);

    sized(m.x0, static_cast<std::size_t>(N) * d, "x0 (B·T, d)");
    sized(m.losses, static_cast<std::size_t>(N), "losses (B·T)");
    sized(m.dlogits, static_cast<std::size_t>(N) * V, "dlogits (B·T, V)");
    logits_fresh_ = false;
    m.run(m.forward_work, [&] {
        embedding_forward(m.tokens.data(), m.wte->w(), m.wpe ? m.wpe->w() : nullptr,  // x = wte[token] + position  (N, d)
                          c.positions == Positions::sinusoidal ? m.tables.sinusoids.data() : nullptr, m.x0.data(), m.B, m.T, d, V);
        const float* x = m.x0.data();
        for (auto& block : m.blocks) x = block->forward(x, m.B, m.T);  // (N, d)
        if (m.lnf) x = m.lnf->forward(x, m.B, m.T);
        m.logits = m.readout->forward(x, m.B, m.T);  // (N, V)
        cross_entropy_rows(m.logits, m.targets.data(), m.losses.data(), m.dlogits.data(), N, V, m.counted);  // and its gradient
    });
    return mean_loss(m.losses.data(), N, m.counted);
}

void GpuModel::backward() {
    Impl& m = *impl_;
    require(m.B > 0, "GpuModel::backward", "no forward has run yet");
    const Impl::Precision precision(m.matmul);
    m.run(m.backward_work, [&] {
        const float* dx = m.readout->backward(m.dlogits.data());  // (N, d), from the fused cross-entropy's dlogits (N, V)
        if (m.lnf) dx = m.lnf->backward(dx);
        for (auto block = m.blocks.rbegin(); block != m.blocks.rend(); ++block) dx = (*block)->backward(dx);
        m.dx0 = dx;
    });
    // the rows of the tables that were read get their gradient (the sinusoidal table is fixed); one block per
    // distinct token of this batch, so never part of a recording
    embedding_backward(m.groups, m.dx0, m.wte->g(), m.wpe ? m.wpe->g() : nullptr, m.B, m.T, static_cast<int>(m.c.d_model));
}

const Mat& GpuModel::logits() const {
    if (!logits_fresh_) {
        const Impl& m = *impl_;
        const std::size_t N = static_cast<std::size_t>(m.B) * m.T, V = m.c.vocab;
        require(N > 0, "GpuModel::logits", "no forward has run yet");
        logits_ = Mat::from_shape({N, V});
        download_floats(m.logits, logits_.data(), logits_.size());
        logits_fresh_ = true;
    }
    return logits_;
}

void GpuModel::zero_grad() { impl_->tensors().zero_grads(); }

void GpuModel::update(AdamW& opt, double clip) {
    Impl& m = *impl_;
    // attn::clip_grad_norm on the device: the global L2 norm over every gradient, in the tensors' order, and the
    // factor each gradient is multiplied by, which the update reads (nothing comes back to the host).
    const float* grad_scale = nullptr;
    if (clip > 0) grad_scale = m.tensors().clip_factor(clip);
    if (opt.steps_taken() == 0)  // a fresh optimizer (a new train_loop) starts from zero moments, as on the CPU
        for (DeviceParam& p : m.params) p.m.zero(), p.v.zero();
    const AdamWConfig& oc = opt.config();
    const AdamW::StepScalars s = opt.count_step();  // t, lr and the bias corrections, as AdamW::step computes them
    m.tensors().adamw(s.lr, oc.beta1, oc.beta2, oc.eps, oc.weight_decay, s.bc1, s.bc2, grad_scale);
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
