#include "train/engine.hpp"

#include "core/error.hpp"
#include "fast/model.hpp"
#include "reference/model.hpp"

namespace attn {

const char* engine_name(Engine e) { return e == Engine::reference ? "reference" : "fast"; }

Engine engine_for(const std::string& flag) {
    require(flag == "reference" || flag == "fast", "--engine", "'" + flag + "' is neither reference nor fast");
    return flag == "reference" ? Engine::reference : Engine::fast;
}

std::unique_ptr<LanguageModel> make_cpu_model(const ModelConfig& config, std::uint64_t seed, Engine engine) {
    if (engine == Engine::reference) return std::make_unique<reference::Model>(config, seed);
    return std::make_unique<fast::Model>(config, seed);
}

void copy_weights(LanguageModel& from_model, LanguageModel& to_model) {
    from_model.sync_to_host(nullptr);  // params() ← the device, for a model that trains elsewhere
    auto& to = to_model.params().all();
    const auto& from = from_model.params().all();
    require(!from_model.params().is_shapes_only(), "copy_weights", "the model to copy from was built with shapes only: it has no weights");
    require(to.size() == from.size(), "copy_weights", std::to_string(from.size()) + " trained tensors for a model of " + std::to_string(to.size()));
    for (std::size_t i = 0; i < to.size(); ++i) {
        require(to[i].name == from[i].name && to[i].value.shape() == from[i].value.shape(), "copy_weights",
                "the trained " + from[i].name + " " + shape_str(from[i].value) + " is not the model's " + to[i].name + " " + shape_str(to[i].value));
        to[i].value = from[i].value;
    }
    to_model.sync_from_host(nullptr);
}

std::unique_ptr<reference::Model> as_reference_model(std::unique_ptr<LanguageModel> trained, const ModelConfig& config) {
    if (auto* plain = dynamic_cast<reference::Model*>(trained.get())) {
        trained.release();
        return std::unique_ptr<reference::Model>(plain);
    }
    auto model = std::make_unique<reference::Model>(config, 0);
    copy_weights(*trained, *model);
    return model;
}

}  // namespace attn
