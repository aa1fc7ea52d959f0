#include "transformer_gpu.hpp"

#include "core/error.hpp"
#include "ops.hpp"

namespace attn::gpu {

DeviceBuffer to_device(const Mat& m, const std::string& what) {
    DeviceBuffer buf(m.size(), what);
    buf.upload(m.data(), m.size());
    return buf;
}

Mat to_host(const DeviceBuffer& buf, std::size_t rows, std::size_t cols) {
    require(buf.size() == rows * cols, "gpu::to_host",
            "a buffer of " + std::to_string(buf.size()) + " floats is not (" + std::to_string(rows) + ", " +
                std::to_string(cols) + ")");
    Mat m = Mat::from_shape({rows, cols});
    buf.download(m.data(), m.size());
    return m;
}

GpuTransformer::GpuTransformer(fast::Model& model) {
    const ModelConfig& c = model.config();
    const bool gpt2_block = c.norm == Norm::pre && c.mixer == Mixer::learned && c.residual && c.d_ff > 0 && c.biases && c.scale &&
                            c.causal && (c.d_k == 0 || c.d_k == c.d_model / c.n_heads) &&
                            (c.positions == Positions::learned || c.positions == Positions::none);
    require(gpt2_block, "gpu::GpuTransformer",
            "the GPU block is GPT-2's pre-norm block (learned causal attention scaled by 1/sqrt(d_head), biases, an FFN, "
            "the residual; positions added to the embeddings): this model differs");
    dims_ = BlockDims{static_cast<int>(c.d_model), static_cast<int>(c.n_heads), static_cast<int>(c.d_ff)};
    Parameters& p = model.params();
    weights_.resize(c.n_layers);
    acts_.resize(c.n_layers);
    for (std::size_t l = 0; l < c.n_layers; ++l) {
        const std::string b = "block" + std::to_string(l) + ".";
        auto up = [&](const char* name) { return to_device(p[b + name].value, b + name); };
        BlockWeights& w = weights_[l];
        w.ln1_gain = up("ln1.gain"), w.ln1_bias = up("ln1.bias");
        w.W_q = up("W_q"), w.b_q = up("b_q"), w.W_k = up("W_k"), w.b_k = up("b_k");
        w.W_v = up("W_v"), w.b_v = up("b_v"), w.W_o = up("W_o"), w.b_o = up("b_o");
        w.ln2_gain = up("ln2.gain"), w.ln2_bias = up("ln2.bias");
        w.W_1 = up("W_1"), w.b_1 = up("b_1"), w.W_2 = up("W_2"), w.b_2 = up("b_2");
    }
}

Mat GpuTransformer::block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T, AttentionVersion version) {
    require(layer < weights_.size(), "gpu::GpuTransformer::block_forward",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(weights_.size()) + " blocks");
    require(x.shape(0) == B * T && x.shape(1) == static_cast<std::size_t>(dims_.d_model), "gpu::GpuTransformer::block_forward",
            "x " + shape_str(x) + " is not (B·T, d_model) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " +
                std::to_string(dims_.d_model) + ")");
    const DeviceBuffer x_dev = to_device(x, "x (N, d)");
    gpu::block_forward(weights_[layer], dims_, x_dev.data(), static_cast<int>(B), static_cast<int>(T), version, acts_[layer]);
    N_ = B * T;
    return to_host(acts_[layer].y, N_, static_cast<std::size_t>(dims_.d_model));
}

Mat GpuTransformer::forward(const Mat& x, std::size_t B, std::size_t T, AttentionVersion version) {
    require(x.shape(0) == B * T && x.shape(1) == static_cast<std::size_t>(dims_.d_model), "gpu::GpuTransformer::forward",
            "x " + shape_str(x) + " is not (B·T, d_model) = (" + std::to_string(B) + "·" + std::to_string(T) + ", " +
                std::to_string(dims_.d_model) + ")");
    const DeviceBuffer x_dev = to_device(x, "x (N, d)");
    const float* in = x_dev.data();
    for (std::size_t l = 0; l < weights_.size(); ++l) {
        gpu::block_forward(weights_[l], dims_, in, static_cast<int>(B), static_cast<int>(T), version, acts_[l]);
        in = acts_[l].y.data();  // block l + 1 reads block l's output where it lies
    }
    N_ = B * T;
    return to_host(acts_.back().y, N_, static_cast<std::size_t>(dims_.d_model));
}

Mat GpuTransformer::activation(std::size_t layer, const std::string& name) const {
    require(layer < acts_.size() && N_ > 0, "gpu::GpuTransformer::activation",
            "no forward has run layer " + std::to_string(layer));
    const BlockActivations& a = acts_[layer];
    const std::size_t d = static_cast<std::size_t>(dims_.d_model), ff = static_cast<std::size_t>(dims_.d_ff);
    if (name == "ln1") return to_host(a.n1, N_, d);
    if (name == "q") return to_host(a.q, N_, d);
    if (name == "k") return to_host(a.k, N_, d);
    if (name == "v") return to_host(a.v, N_, d);
    if (name == "attention") return to_host(a.mixed, N_, d);
    if (name == "a") return to_host(a.a, N_, d);
    if (name == "ln2") return to_host(a.n2, N_, d);
    if (name == "pre_ff") return to_host(a.pre_ff, N_, ff);
    if (name == "hidden") return to_host(a.hidden, N_, ff);
    if (name == "y") return to_host(a.y, N_, d);
    throw Error("gpu::GpuTransformer::activation: no activation named '" + name +
                "' (ln1, q, k, v, attention, a, ln2, pre_ff, hidden, y)");
}

}  // namespace attn::gpu
