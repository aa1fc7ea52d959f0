// The CPU model's blocks on the GPU (Section 9.8): the boundary between the library's matrices (xtensor,
// host) and the GPU's raw device buffers. Plain C++ compiled by the host compiler; the .cu files never
// see xtensor.
//
//   attn::fast::Model cpu(config, seed);                 // weights by name: "block0.W_q", …
//   attn::gpu::GpuTransformer gpu(cpu);             // the same weights, uploaded once
//   Mat y_gpu = gpu.block_forward(0, x, B, T);      // beside cpu.block_forward(0, x, B, T)
#pragma once

#include <string>
#include <vector>

#include "block.hpp"
#include "buffer.hpp"
#include "core/tensor.hpp"
#include "fast/model.hpp"

namespace attn::gpu {

// Host (rows, cols) ↔ device.
DeviceBuffer to_device(const Mat& m, const std::string& what);
Mat to_host(const DeviceBuffer& buf, std::size_t rows, std::size_t cols);

class GpuTransformer {
public:
    // Uploads every block's sixteen tensors from model.params(). GPT-2's pre-norm block only (norm = pre,
    // biases, an FFN, learned causal attention); throws attn::Error for any other configuration.
    explicit GpuTransformer(fast::Model& model);

    std::size_t n_layers() const { return weights_.size(); }
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
    BlockDims dims_;
    std::vector<BlockWeights> weights_;
    std::vector<BlockActivations> acts_;
    std::size_t N_ = 0;  // rows of the last forward
};

}  // namespace attn::gpu
