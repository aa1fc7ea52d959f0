// Where a language model trains: `--device cpu|gpu` on the programs that train (10_block, 12_language_model).
//
//   std::unique_ptr<LanguageModel> model = make_model(config, seed, Device::gpu, Engine::fast);
//
// cpu is attn::fast::Model or attn::reference::Model, as `engine` says (attn/engine.hpp); gpu is attn::gpu::GpuModel (common/gpu/gpu_model.hpp), the same model with the same
// initial weights, trained on the device by the same loop. Without a GPU (none visible, or a build without
// CUDA) a gpu model throws attn::NoDevice, which the programs turn into exit status 77.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "attn/config.hpp"
#include "attn/engine.hpp"
#include "attn/language_model.hpp"
#include "attn/op.hpp"

namespace attn {

enum class Device { cpu, gpu };
const char* device_name(Device d);  // "cpu", "gpu"

// Whether this build has the GPU module, and a device to run it on; the reason in `why` when not.
bool gpu_available(std::string* why = nullptr);
// The GPU's name, or the reason there is none.
std::string gpu_description();
// The device a --device flag's word ("cpu" or "gpu") names, checked before any work starts: "gpu" without a
// GPU throws attn::NoDevice saying why.
Device device_for(const std::string& flag);

// What the GPU module has asked of the device since the program started: kernel launches, cuBLAS products,
// allocations, fills, the blocking copies each way and CUDA Graph launches (all 0 in a build without it). bench_lm_train's `phases`
// prints them per training step.
struct GpuWork {
    long long kernels = 0, blas_calls = 0;
    long long allocations = 0, fills = 0, copies_to_device = 0, copies_to_host = 0;
    long long graphs = 0;  // CUDA Graph launches
};
GpuWork gpu_work();

// How the GPU model runs, each choice by name; the defaults are the plain ones.
// Which attention the blocks train with: FlashAttention-2 where it takes the shape (causal learned weights,
// d_k = d_v ≤ 128) and its blocks fit the card's shared memory, else the materialised (B·h, T, T) weights; or one
// of the two by name.
enum class AttentionPath { automatic, materialised, flash };
// eager: every kernel and product launched from the host as the step runs. graph: a training step's forward and
// backward (all but the token uploads, the loss's read-back and the embedding's data-dependent backward) recorded
// once as CUDA Graphs and replayed with one launch each: the same work, the same bits, fewer launches.
enum class Launches { eager, graph };
struct GpuSettings {
    AttentionPath attention = AttentionPath::automatic;
    Matmul matmul = Matmul::fp32;  // the products' precision (attn/op.hpp)
    Launches launches = Launches::eager;
};

// On the GPU the engine is the GPU model's own kernels, which mirror the reference engine's layers one for one,
// run as `gpu` says. On the CPU anything but the default GpuSettings throws attn::Error.
std::unique_ptr<LanguageModel> make_model(const ModelConfig& config, std::uint64_t seed, Device device, Engine engine,
                                          const GpuSettings& gpu = {});

}  // namespace attn
