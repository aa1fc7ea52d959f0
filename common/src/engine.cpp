#include "attn/engine.hpp"

#include "attn/error.hpp"
#include "reference/model.hpp"

namespace attn {

const char* engine_name(Engine e) { return e == Engine::reference ? "reference" : "fast"; }

Engine engine_for(const std::string& flag) {
    require(flag == "reference" || flag == "fast", "--engine", "'" + flag + "' is neither reference nor fast");
    return flag == "reference" ? Engine::reference : Engine::fast;
}

std::unique_ptr<LanguageModel> make_cpu_model(const ModelConfig& config, std::uint64_t seed, Engine engine) {
    if (engine == Engine::reference) return std::make_unique<reference::Model>(config, seed);
    return std::make_unique<Model>(config, seed);
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
