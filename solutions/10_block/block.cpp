// Reference answers to the exercises of Sections 9.5–9.8 (the block).
#include "10_block/block.hpp"

#include <cmath>

namespace ex {

std::size_t gpt2_param_count(std::size_t V, std::size_t n_ctx, std::size_t d, std::size_t n_layers) {
    const std::size_t block = 12 * d * d + 13 * d;  // attention 4d² + 4d, FFN 8d² + 5d, two LayerNorms 4d
    return V * d + n_ctx * d + n_layers * block + 2 * d;  // tied output: no (d, V) matrix of its own
}

std::size_t attention_matrix_bytes(std::size_t B, std::size_t h, std::size_t n) { return B * h * n * n * sizeof(float); }

attn::OnlineSoftmax online_softmax_tile(attn::OnlineSoftmax state, const float* s, int n, const float* v, int d_head,
                                        float* acc) {
    float m_new = state.m;
    for (int j = 0; j < n; ++j) m_new = std::max(m_new, s[j]);
    if (m_new == -INFINITY) return state;  // nothing seen yet and nothing new: leave it as it was
    const float c = std::exp(state.m - m_new);
    float l = state.l * c;
    for (int i = 0; i < d_head; ++i) acc[i] = state.m == -INFINITY ? 0.0f : acc[i] * c;  // the first tile: garbage, even NaN, goes
    for (int j = 0; j < n; ++j) {
        const float p = std::exp(s[j] - m_new);
        l += p;
        for (int i = 0; i < d_head; ++i) acc[i] += p * v[j * d_head + i];
    }
    return {m_new, l};
}

}  // namespace ex
