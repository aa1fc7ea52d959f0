#include "attn/config.hpp"

#include <cmath>

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

}  // namespace attn
