#include "chapters/08_normalization/norm_placement.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "math/stats.hpp"
#include "reference/model.hpp"
#include "text/corpus.hpp"

namespace attn::sec08 {

ModelConfig norm_stack(const ModelSize& size, Norm norm, Init init) {
    ModelConfig c = gpt2_config(size);
    c.norm = norm;
    c.head = Head::untied, c.init = init;
    return c;
}

BlockStructure zeroed_block_structure(Norm norm, const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads,
                                      std::uint64_t seed) {
    require(x.shape(0) == B * T, "zeroed_block_structure",
            "x is " + shape_str(x) + " for B·T = " + std::to_string(B) + "·" + std::to_string(T));
    const std::size_t d = x.shape(1);
    ModelConfig c = gpt2_config({.vocab = 2, .max_T = T, .d_model = d, .n_heads = n_heads});
    c.norm = norm;
    reference::Model model(c, seed);  // the engine a learner reads (common/reference/)
    for (const char* name : {"block0.W_o", "block0.b_o", "block0.W_2", "block0.b_2"}) model.params()[name].value.fill(0.0f);
    const Mat y = model.block_forward(0, x, T);  // (B·T, d)
    BlockStructure s;
    s.identity_error = max_abs_diff(y, x);
    s.min_row_std = INFINITY;
    const double width = static_cast<double>(d);
    for (std::size_t r = 0; r < y.shape(0); ++r) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < y.shape(1); ++j) mean += y(r, j);
        mean /= width;
        for (std::size_t j = 0; j < y.shape(1); ++j) var += (y(r, j) - mean) * (y(r, j) - mean);
        const double sd = std::sqrt(var / width);
        s.max_row_mean = std::max(s.max_row_mean, std::fabs(mean));
        s.min_row_std = std::min(s.min_row_std, sd), s.max_row_std = std::max(s.max_row_std, sd);
    }
    return s;
}

GradientProfile init_gradient_profile(const ModelConfig& config, const std::vector<int>& data, std::size_t batch,
                                      std::size_t T, std::uint64_t seed, int seeds) {
    require(seeds > 0 && batch > 0 && config.n_layers > 0, "init_gradient_profile", "seeds, batch and n_layers must be positive");
    GradientProfile p;
    p.per_block.assign(config.n_layers, 0.0);
    std::vector<int> tokens, targets;
    std::vector<double> ratios;
    for (int s = 0; s < seeds; ++s) {
        const std::uint64_t model_seed = seed + static_cast<std::uint64_t>(s);
        reference::Model model(config, model_seed);  // the engine a learner reads (common/reference/)
        Rng rng(model_seed, 0x23);
        sample_windows(data, batch, T, rng, tokens, targets);
        model.params().zero_grad();
        model.forward(tokens, targets, batch, T);
        model.backward();
        for (std::size_t l = 0; l < config.n_layers; ++l) p.per_block[l] += model.block_grad_norm(l) / seeds;
        ratios.push_back(model.block_grad_norm(config.n_layers - 1) / model.block_grad_norm(0));
    }
    p.ratio = p.per_block.back() / p.per_block.front();
    p.model_ratio = spread_of(ratios);
    return p;
}

}  // namespace attn::sec08
