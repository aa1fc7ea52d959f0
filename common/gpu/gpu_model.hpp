// Training on the GPU: the CPU's language model (fast/model.hpp), every configuration of it — each rung of
// Section 9.1's ladder, pre-norm, post-norm and no norm, every position kind, the tied readout — with its
// weights, gradients and AdamW's two moments on the device, behind the same LanguageModel interface that
// attn::train_loop trains. Its layers are the reference engine's (common/reference/), one for one, on the device
// (model_layers.hpp: gpu::Linear, LayerNorm, SelfAttention, Block, … composed by make_block as the reference
// composes them). One step is a forward and a backward through them and one AdamW kernel per tensor; only the
// loss comes back.
//
//   attn::gpu::GpuModel model(config, seed);       // the same weights as attn::fast::Model(config, seed)
//   attn::train_on_tokens(model, data, T, tc);      // the CPU's loop, unchanged
//
// The weights start as the CPU model's (it is built, and its weights uploaded), so a seed means the same
// model on both devices. params() is the host copy: current after sync_to_host, which train_loop calls
// before every checkpoint and once at the end.
//
// Plain C++ on the device operations: no CUDA types, no xtensor in the device code. The unit tests compile
// this file unchanged against the kernels' CPU emulation (tests/common/cuda_on_cpu.hpp) and hold it to
// attn::fast::Model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fast/model.hpp"
#include "gpu/placement.hpp"

namespace attn::gpu {

using attn::AttentionPath;  // gpu/placement.hpp, with GpuSettings
using attn::GpuSettings;
using attn::Launches;
const char* attention_path_name(AttentionPath path);  // "materialised", "flash", "automatic"

class GpuModel : public LanguageModel {
public:
    // settings by name: GpuModel(config, seed, {.matmul = Matmul::tf32}) (gpu/placement.hpp)
    GpuModel(const ModelConfig& config, std::uint64_t seed, const GpuSettings& settings = {});
    ~GpuModel() override;
    GpuModel(const GpuModel&) = delete;
    GpuModel& operator=(const GpuModel&) = delete;

    double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) override;
    void backward() override;
    Parameters& params() override { return host_.params(); }
    const Mat& logits() const override;  // (B·T, V), copied from the device on first read after a forward
    std::string describe() const override { return host_.describe(); }

    void zero_grad() override;
    // Clipping is folded into the update (the factor stays on the device): unlike the CPU's clip_grad_norm it leaves
    // the gradients as the backward wrote them, so gradients() after an update returns them unclipped.
    void update(AdamW& opt, double clip) override;
    void sync_to_host(AdamW* opt) override;
    void sync_from_host(const AdamW* opt) override;
    void wait() override;  // gpu::synchronize()

    const ModelConfig& config() const { return host_.config(); }
    // The path the blocks' attention takes (flash or materialised) on B sequences of T tokens.
    AttentionPath attention_path(std::size_t B, std::size_t T) const;
    // Gradients in params()'s order, copied to the host (a test holds them to attn::fast::Model's).
    std::vector<Mat> gradients() const;

private:
    struct Impl;
    fast::Model host_;  // the configuration, the names, the initial weights, and the host copy of the weights
    std::unique_ptr<Impl> impl_;
    mutable Mat logits_;
    mutable bool logits_fresh_ = false;
};

}  // namespace attn::gpu
