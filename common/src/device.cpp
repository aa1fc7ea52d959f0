// attn/device.hpp: built into attn_device, with the GPU module where nvcc exists (ATTN_HAVE_CUDA), without
// it elsewhere.
#include "attn/device.hpp"

#include "attn/error.hpp"

#if ATTN_HAVE_CUDA
#include "gpu.hpp"
#include "gpu_model.hpp"
#endif

namespace attn {

const char* device_name(Device d) { return d == Device::gpu ? "gpu" : "cpu"; }

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

std::unique_ptr<LanguageModel> make_model(const ModelConfig& config, std::uint64_t seed, Device device) {
    if (device == Device::cpu) return std::make_unique<Model>(config, seed);
    std::string why;
    if (!gpu_available(&why)) throw NoDevice("--device gpu: " + why);
#if ATTN_HAVE_CUDA
    return std::make_unique<gpu::GpuModel>(config, seed);
#else
    throw NoDevice("--device gpu: " + why);
#endif
}

std::unique_ptr<Model> as_cpu_model(std::unique_ptr<LanguageModel> trained, const ModelConfig& config) {
    if (auto* cpu = dynamic_cast<Model*>(trained.get())) {
        trained.release();
        return std::unique_ptr<Model>(cpu);
    }
    trained->sync_to_host(nullptr);  // params() ← the device, for a model that trains elsewhere
    auto model = std::make_unique<Model>(config, 0);
    auto& to = model->params().all();
    const auto& from = trained->params().all();
    require(to.size() == from.size(), "as_cpu_model", std::to_string(from.size()) + " trained tensors for a model of " + std::to_string(to.size()));
    for (std::size_t i = 0; i < to.size(); ++i) {
        require(to[i].name == from[i].name && to[i].value.shape() == from[i].value.shape(), "as_cpu_model",
                "the trained " + from[i].name + " " + shape_str(from[i].value) + " is not the model's " + to[i].name + " " + shape_str(to[i].value));
        to[i].value = from[i].value;
    }
    return model;
}

}  // namespace attn
