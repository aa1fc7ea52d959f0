// gpu/placement.hpp: built into attn_device, with the GPU module where nvcc exists (ATTN_HAVE_CUDA), without
// it elsewhere.
#include "gpu/placement.hpp"

#include "core/error.hpp"

#if ATTN_HAVE_CUDA
#include "gpu.hpp"
#include "gpu_model.hpp"
#include "launch.hpp"
#endif

namespace attn {

bool gpu_available(std::string* why) {
#if ATTN_HAVE_CUDA
    const gpu::DeviceInfo info = gpu::query_device();
    if (info.count == 0 && why) *why = "no CUDA device is visible (" + info.why_none + ")";
    return info.count > 0;
#else
    if (why) *why = "this build has no GPU module (nvcc was not found when CMake configured it)";
    return false;
#endif
}

std::string gpu_description() {
    std::string why;
    if (!gpu_available(&why)) return why;
#if ATTN_HAVE_CUDA
    return gpu::query_device().name;
#else
    return why;
#endif
}

Device device_for(const std::string& flag) {
    require(flag == "cpu" || flag == "gpu", "--device", "'" + flag + "' is neither cpu nor gpu");
    if (flag == "cpu") return Device::cpu;
    if (std::string why; !gpu_available(&why)) throw NoDevice("--device gpu: " + why);
    return Device::gpu;
}

GpuWork gpu_work() {
#if ATTN_HAVE_CUDA
    const gpu::DeviceWork& w = gpu::device_work();
    return {.kernels = w.kernels, .blas_calls = w.blas_calls, .allocations = w.allocations, .fills = w.fills,
            .copies_to_device = w.copies_to_device, .copies_to_host = w.copies_to_host, .graphs = w.graphs};
#else
    return {};
#endif
}

std::unique_ptr<LanguageModel> make_model(const ModelConfig& config, std::uint64_t seed, Device device, Engine engine, const GpuSettings& gpu) {
    require(device == Device::gpu || gpu.matmul == Matmul::fp32, "make_model", "TF32 products are the GPU's: the CPU's are fp32");
    require(device == Device::gpu || gpu.launches == Launches::eager, "make_model", "CUDA Graphs are the GPU's");
    if (device == Device::cpu) return make_cpu_model(config, seed, engine);
    std::string why;
    if (!gpu_available(&why)) throw NoDevice("--device gpu: " + why);
#if ATTN_HAVE_CUDA
    return std::make_unique<gpu::GpuModel>(config, seed, gpu);
#else
    throw NoDevice("--device gpu: " + why);
#endif
}

}  // namespace attn
