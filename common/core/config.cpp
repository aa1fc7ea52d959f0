#include "core/config.hpp"

#include <cmath>
#include <map>
#include <vector>
#include <sstream>

#include "core/error.hpp"

namespace attn {

const char* positions_name(Positions p) {
    switch (p) {
        case Positions::none: return "none";
        case Positions::learned: return "learned";
        case Positions::sinusoidal: return "sinusoidal";
        case Positions::rope: return "RoPE";
        case Positions::alibi: return "ALiBi";
    }
    return "?";
}

float init_std(Init init, std::size_t fan_in) {
    switch (init) {
        case Init::fan_in: return 1.0f / std::sqrt(static_cast<float>(fan_in));  // keeps x W at the scale of x
        case Init::pytorch: return 1.0f / std::sqrt(3.0f * static_cast<float>(fan_in));
        case Init::gpt2: return 0.02f;
    }
    return 0.0f;
}

float embedding_std(Init init) { return init == Init::gpt2 ? 0.02f : 1.0f; }

std::uint64_t init_stream(Init init) { return init == Init::fan_in ? 0x30de1 : 0x7f; }

ModelConfig gpt2_config(const ModelSize& s) {
    return {.vocab = s.vocab, .max_T = s.max_T, .d_model = s.d_model, .n_heads = s.n_heads, .n_layers = s.n_layers,
            .d_ff = 4 * s.d_model, .norm = Norm::pre, .biases = true, .head = Head::tied, .init = Init::gpt2};
}

std::string describe(const ModelConfig& c) {
    auto on = [](bool b) { return b ? "on" : "off"; };
    const char* mixer = c.mixer == Mixer::none ? "none" : c.mixer == Mixer::uniform ? "uniform" : "learned";
    const char* norm = c.norm == Norm::none ? "none" : c.norm == Norm::pre ? "pre" : "post";
    const char* init = c.init == Init::fan_in ? "fan_in" : c.init == Init::pytorch ? "pytorch" : "gpt2";
    return "vocab " + std::to_string(c.vocab) + ", max_T " + std::to_string(c.max_T) + ", d_model " + std::to_string(c.d_model) +
           ", heads " + std::to_string(c.n_heads) + ", layers " + std::to_string(c.n_layers) + ", d_k " + std::to_string(c.d_k) +
           ", mixer " + mixer + ", residual " + on(c.residual) + ", d_ff " + std::to_string(c.d_ff) + ", norm " + norm +
           ", positions " + positions_name(c.positions) + ", scale " + on(c.scale) + ", causal " + on(c.causal) + ", biases " +
           on(c.biases) + ", W_o " + on(c.output_projection) + ", b_o " + on(c.output_bias) + ", head " +
           (c.head == Head::tied ? "tied" : "untied") + ", init " + init;
}

ModelConfig parse_config(const std::string& text) {
    require(!text.empty() && text.back() != ',', "parse_config", "'" + text + "' ends without its last field");
    std::map<std::string, std::string> fields;  // "d_model" → "64", from "…, d_model 64, …"
    std::stringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
        const std::size_t start = item.find_first_not_of(' ');
        const std::size_t space = item.find(' ', start == std::string::npos ? 0 : start);
        require(start != std::string::npos && space != std::string::npos && space + 1 < item.size(), "parse_config",
                "'" + item + "' is not a field and its value (in '" + text + "')");
        const std::string key = item.substr(start, space - start), value = item.substr(space + 1);
        require(fields.emplace(key, value).second, "parse_config", "the field '" + key + "' is given twice in '" + text + "'");
    }
    auto take = [&](const std::string& key) {
        const auto at = fields.find(key);
        require(at != fields.end(), "parse_config", "the field '" + key + "' is missing from '" + text + "'");
        const std::string value = at->second;
        fields.erase(at);
        return value;
    };
    auto count = [&](const std::string& key) {
        const std::string v = take(key);
        require(!v.empty() && v.size() <= 12 && v.find_first_not_of("0123456789") == std::string::npos, "parse_config",
                key + " '" + v + "' is not a count");
        return static_cast<std::size_t>(std::stoull(v));
    };
    auto one_of = [&](const std::string& key, const std::vector<std::string>& words) {
        const std::string v = take(key);
        for (std::size_t i = 0; i < words.size(); ++i)
            if (v == words[i]) return i;
        std::string known;
        for (const std::string& w : words) known += (known.empty() ? "" : ", ") + w;
        throw Error("parse_config: " + key + " '" + v + "' is none of " + known);
    };
    auto on = [&](const std::string& key) { return one_of(key, {"off", "on"}) == 1; };
    ModelConfig c;
    c.vocab = count("vocab"), c.max_T = count("max_T"), c.d_model = count("d_model"), c.n_heads = count("heads");
    c.n_layers = count("layers"), c.d_k = count("d_k");
    c.mixer = static_cast<Mixer>(one_of("mixer", {"none", "uniform", "learned"}));
    c.residual = on("residual");
    c.d_ff = count("d_ff");
    c.norm = static_cast<Norm>(one_of("norm", {"none", "pre", "post"}));
    c.positions = static_cast<Positions>(one_of("positions", {"none", "learned", "sinusoidal", "RoPE", "ALiBi"}));
    c.scale = on("scale"), c.causal = on("causal"), c.biases = on("biases"), c.output_projection = on("W_o"), c.output_bias = on("b_o");
    c.head = one_of("head", {"untied", "tied"}) == 1 ? Head::tied : Head::untied;
    c.init = static_cast<Init>(one_of("init", {"fan_in", "pytorch", "gpt2"}));
    require(fields.empty(), "parse_config", "the field '" + (fields.empty() ? std::string() : fields.begin()->first) + "' is unknown (in '" + text + "')");
    return c;
}

}  // namespace attn
