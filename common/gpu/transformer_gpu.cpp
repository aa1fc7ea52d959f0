#include "transformer_gpu.hpp"

#include "core/error.hpp"

namespace attn::gpu {

DeviceBuffer to_device(const Mat& m, const std::string& what) {
    DeviceBuffer buf(m.size(), what);
    buf.upload(m.data(), m.size());
    return buf;
}

Mat to_host(const float* device, std::size_t rows, std::size_t cols) {
    Mat m = Mat::from_shape({rows, cols});
    download_floats(device, m.data(), m.size());
    return m;
}

Mat to_host(const DeviceBuffer& buf, std::size_t rows, std::size_t cols) {
    require(buf.size() == rows * cols, "gpu::to_host",
            "a buffer of " + std::to_string(buf.size()) + " floats is not (" + std::to_string(rows) + ", " +
                std::to_string(cols) + ")");
    return to_host(buf.data(), rows, cols);
}

void check_block_dims(const BlockDims& dims, AttentionVersion version) {
    require(dims.d_model > 0 && dims.n_heads > 0 && dims.d_ff > 0, "gpu::GpuTransformer",
            "d_model, n_heads, d_ff = " + std::to_string(dims.d_model) + ", " + std::to_string(dims.n_heads) + ", " +
                std::to_string(dims.d_ff) + " must be positive");
    require(dims.d_model % dims.n_heads == 0, "gpu::GpuTransformer",
            "d_model = " + std::to_string(dims.d_model) + " is not divisible by n_heads = " + std::to_string(dims.n_heads));
    if (version != AttentionVersion::v2)
        require(dims.d_head() <= kMaxDHead, "gpu::GpuTransformer",
                "d_head = " + std::to_string(dims.d_head()) + " exceeds " + std::to_string(kMaxDHead) + " for attention " +
                    version_name(version) + " (v2 takes any d_head)");
}

GpuTransformer::GpuTransformer(fast::Model& model) : config_(model.config()) {
    const ModelConfig& c = config_;
    const bool gpt2_block = c.norm == Norm::pre && c.mixer == Mixer::learned && c.residual && c.d_ff > 0 && c.biases && c.scale &&
                            c.causal && c.output_projection && (c.d_k == 0 || c.d_k == c.d_model / c.n_heads) &&
                            (c.positions == Positions::learned || c.positions == Positions::none);
    require(gpt2_block, "gpu::GpuTransformer",
            "the GPU block is GPT-2's pre-norm block (learned causal attention scaled by 1/sqrt(d_head), biases, an FFN, "
            "the residual; positions added to the embeddings): this model differs");
    dims_ = BlockDims{static_cast<int>(c.d_model), static_cast<int>(c.n_heads), static_cast<int>(c.d_ff)};
    Parameters& p = model.params();
    const ParamLookup at = [&](const std::string& name) {
        auto it = params_.find(name);
        if (it == params_.end()) {  // uploaded the first time a layer asks for it
            Param& host = p[name];
            it = params_.emplace(name, DeviceParam{}).first;
            it->second.host = &host;
            it->second.value = to_device(host.value, name);
        }
        return &it->second;
    };
    for (std::size_t l = 0; l < c.n_layers; ++l)
        blocks_.push_back(std::make_unique<Block>(at, "block" + std::to_string(l) + ".", config_, tables_, AttentionPath::materialised, 0));
    outputs_.assign(blocks_.size(), nullptr);
}

DeviceBuffer GpuTransformer::upload_input(const Mat& x, std::size_t B, std::size_t T, AttentionVersion version,
                                          const char* where) const {
    require(x.shape(0) == B * T && x.shape(1) == static_cast<std::size_t>(dims_.d_model), where,
            "x " + shape_str(x) + " is not (B·T, d_model) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " +
                std::to_string(dims_.d_model) + ")");
    check_block_dims(dims_, version);
    return to_device(x, "x (N, d)");
}

const float* GpuTransformer::run(std::size_t layer, const float* x, std::size_t B, std::size_t T, AttentionVersion version) {
    blocks_[layer]->use_kernel(version);
    outputs_[layer] = blocks_[layer]->forward(x, static_cast<int>(B), static_cast<int>(T));
    return outputs_[layer];
}

Mat GpuTransformer::block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T, AttentionVersion version) {
    require(layer < blocks_.size(), "gpu::GpuTransformer::block_forward",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(blocks_.size()) + " blocks");
    const DeviceBuffer x_dev = upload_input(x, B, T, version, "gpu::GpuTransformer::block_forward");
    const float* y = run(layer, x_dev.data(), B, T, version);
    N_ = B * T;
    return to_host(y, N_, static_cast<std::size_t>(dims_.d_model));  // waits for the device
}

Mat GpuTransformer::forward(const Mat& x, std::size_t B, std::size_t T, AttentionVersion version) {
    const DeviceBuffer x_dev = upload_input(x, B, T, version, "gpu::GpuTransformer::forward");
    const float* in = x_dev.data();
    for (std::size_t l = 0; l < blocks_.size(); ++l) in = run(l, in, B, T, version);  // block l + 1 reads block l's y where it lies
    N_ = B * T;
    return to_host(in, N_, static_cast<std::size_t>(dims_.d_model));
}

Mat GpuTransformer::activation(std::size_t layer, const std::string& name) const {
    require(layer < blocks_.size() && N_ > 0 && outputs_[layer], "gpu::GpuTransformer::activation",
            "no forward has run layer " + std::to_string(layer));
    const Block& b = *blocks_[layer];
    const std::size_t d = static_cast<std::size_t>(dims_.d_model), ff = static_cast<std::size_t>(dims_.d_ff);
    if (name == "ln1") return to_host(b.ln1().output(), N_, d);
    if (name == "q") return to_host(b.attention().q(), N_, d);
    if (name == "k") return to_host(b.attention().k(), N_, d);
    if (name == "v") return to_host(b.attention().v(), N_, d);
    if (name == "attention") return to_host(b.attention().merged(), N_, d);
    if (name == "a") return to_host(b.a(), N_, d);
    if (name == "ln2") return to_host(b.ln2().output(), N_, d);
    if (name == "pre_ff") return to_host(b.ffn().pre_ff(), N_, ff);
    if (name == "hidden") return to_host(b.ffn().hidden(), N_, ff);
    if (name == "y") return to_host(outputs_[layer], N_, d);
    throw Error("gpu::GpuTransformer::activation: no activation named '" + name +
                "' (ln1, q, k, v, attention, a, ln2, pre_ff, hidden, y)");
}

}  // namespace attn::gpu
