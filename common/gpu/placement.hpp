// Where a language model trains: `--device cpu|gpu` on the programs that train (10_block, 12_language_model).
//
//   std::unique_ptr<LanguageModel> model = make_model(config, seed, Device::gpu, Engine::fast);
//
// cpu is attn::fast::Model or attn::reference::Model, as `engine` says (train/engine.hpp); gpu is
// attn::gpu::GpuModel (gpu/gpu_model.hpp), the same model with the same initial weights, trained on the
// device by the same loop. The choices themselves (Device, GpuSettings) are core/device_settings.hpp's. Without a GPU (none visible, or a build without
// CUDA) a gpu model throws attn::NoDevice, which the programs turn into exit status 77.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/config.hpp"
#include "core/device_settings.hpp"
#include "core/language_model.hpp"
#include "train/engine.hpp"

namespace attn {

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

// On the GPU the engine is the GPU model's own kernels, which mirror the reference engine's layers one for one,
// run as `gpu` says. On the CPU anything but the default GpuSettings throws attn::Error.
std::unique_ptr<LanguageModel> make_model(const ModelConfig& config, std::uint64_t seed, Device device, Engine engine,
                                          const GpuSettings& gpu = {});

}  // namespace attn
