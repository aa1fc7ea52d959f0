// The CPU model's blocks on the GPU, forward only (Mục 9.8, 11_gpu_block): the boundary between the library's
// matrices (xtensor, host) and the GPU's device buffers. The blocks are the GPU model's own (model_layers.hpp,
// gpu::Block: the layers training runs), their attention one of the three forward kernels set side by side
// (ops.hpp: v1, v2, v3). Plain C++ compiled by the host compiler; the .cu files never see xtensor.
//
//   attn::fast::Model cpu(config, seed);            // weights by name: "block0.W_q", …
//   attn::gpu::GpuTransformer gpu(cpu);             // the same weights, uploaded once
//   Mat y_gpu = gpu.block_forward(0, x, B, T);      // beside cpu.block_forward(0, x, B, T)
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "buffer.hpp"
#include "core/config.hpp"
#include "core/tensor.hpp"
#include "fast/model.hpp"
#include "launch.hpp"
#include "model_layers.hpp"

namespace attn::gpu {

// Host (rows, cols) ↔ device. to_host from a pointer reads the first rows·cols floats (a layer's buffer only
// grows, so it may hold more); from a DeviceBuffer, the buffer must be exactly (rows, cols).
DeviceBuffer to_device(const Mat& m, const std::string& what);
Mat to_host(const float* device, std::size_t rows, std::size_t cols);
Mat to_host(const DeviceBuffer& buf, std::size_t rows, std::size_t cols);

// A block's sizes, and the check of them for an attention kernel: positive sizes, n_heads divides d_model,
// d_head within the kernel's limit (v1 and v3: kMaxDHead; v2 takes any).
struct BlockDims {
    int d_model = 0, n_heads = 0, d_ff = 0;
    int d_head() const { return n_heads > 0 ? d_model / n_heads : 0; }
};
void check_block_dims(const BlockDims& dims, AttentionVersion version);

class GpuTransformer {
public:
    // Uploads every block's sixteen tensors from model.params(). GPT-2's pre-norm block only (norm = pre,
    // biases, an FFN, learned causal attention); throws attn::Error for any other configuration.
    explicit GpuTransformer(fast::Model& model);
    GpuTransformer(const GpuTransformer&) = delete;  // the blocks hold references to the configuration and weights
    GpuTransformer& operator=(const GpuTransformer&) = delete;

    std::size_t n_layers() const { return blocks_.size(); }
    const BlockDims& dims() const { return dims_; }

    // One block: x (B·T, d_model) → y (B·T, d_model), what model.block_forward(layer, x, B, T) computes.
    Mat block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T,
                      AttentionVersion version = AttentionVersion::v3);
    // The stack: every block in turn, the activations staying on the device between blocks.
    Mat forward(const Mat& x, std::size_t B, std::size_t T, AttentionVersion version = AttentionVersion::v3);

    // An intermediate of `layer` from the last block_forward or forward, as a host matrix:
    // "ln1" (N, d), "q", "k", "v", "attention" (the merged heads before W_o), "a" (after the first
    // residual), "ln2", "pre_ff" (N, d_ff), "hidden" (N, d_ff), "y" (N, d).
    Mat activation(std::size_t layer, const std::string& name) const;

private:
    // x checked against (B·T, d_model) and the version's limits (naming `where`), then uploaded.
    DeviceBuffer upload_input(const Mat& x, std::size_t B, std::size_t T, AttentionVersion version, const char* where) const;
    const float* run(std::size_t layer, const float* x, std::size_t B, std::size_t T, AttentionVersion version);

    ModelConfig config_;
    BlockDims dims_;
    std::map<std::string, DeviceParam> params_;  // by name; a map, so that the blocks' references stay put
    PositionTables tables_;                       // none used (positions are added to the embeddings)
    std::vector<std::unique_ptr<Block>> blocks_;
    std::vector<const float*> outputs_;           // each block's y from the last forward
    std::size_t N_ = 0;                           // rows of the last forward
};

}  // namespace attn::gpu
