#include "fast/model.hpp"

#include <cmath>

#include "core/error.hpp"
#include "math/positions.hpp"

namespace attn::fast {

Model::Model(const ModelConfig& config, std::uint64_t seed) : c_(config) {
    const std::size_t d = c_.d_model;
    require(c_.vocab > 0 && c_.max_T > 0 && d > 0 && c_.n_layers > 0, "Model",
            "vocab, max_T, d_model and n_layers must be positive");
    require(c_.positions != Positions::sinusoidal || d % 2 == 0, "Model",
            "sinusoidal positions come in sin/cos pairs: d_model = " + std::to_string(d) + " must be even");
    Rng rng(seed, init_stream(c_.init));
    wte_ = &params_.normal("wte", c_.vocab, d, embedding_std(c_.init), rng);
    if (c_.positions == Positions::learned) wpe_ = &params_.normal("wpe", c_.max_T, d, embedding_std(c_.init), rng);
    const BlockConfig block{.attention = {.d_model = d,
                                          .n_heads = c_.n_heads,
                                          .d_k = c_.d_k,
                                          .positions = c_.positions,
                                          .scale = c_.scale,
                                          .causal = c_.causal,
                                          .biases = c_.biases,
                                          .output_projection = c_.output_projection,
                                          .output_bias = c_.output_bias},
                            .mixer = c_.mixer,
                            .d_ff = c_.d_ff,
                            .norm = c_.norm,
                            .residual = c_.residual};
    blocks_.reserve(c_.n_layers);
    for (std::size_t l = 0; l < c_.n_layers; ++l) blocks_.emplace_back(params_, "block" + std::to_string(l) + ".", block, c_.init, rng);
    if (c_.norm == Norm::pre) lnf_.emplace(params_, "lnf", d);
    if (c_.head == Head::untied) {
        W_out_ = &params_.normal("W_out", d, c_.vocab, init_std(c_.init, d), rng);
        b_out_ = &params_.zeros("b_out", 1, c_.vocab);
    }
}

double Model::forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) {
    require(tokens.size() == B * T && targets.size() == B * T, "Model::forward",
            std::to_string(tokens.size()) + " tokens and " + std::to_string(targets.size()) + " targets for B·T = " +
                std::to_string(B) + "·" + std::to_string(T));
    require(T <= c_.max_T, "Model::forward", "T = " + std::to_string(T) + " exceeds max_T = " + std::to_string(c_.max_T));
    tokens_ = tokens, targets_ = targets, T_ = T;
    Mat x = embedding_forward(tokens, T, *wte_, wpe_);  // (N, d)
    if (c_.positions == Positions::sinusoidal) {
        if (sinusoids_.shape(0) != T) sinusoids_ = sinusoidal_table(T, c_.d_model);  // (T, d), fixed
        for (std::size_t n = 0; n < x.shape(0); ++n)
            for (std::size_t j = 0; j < c_.d_model; ++j) x(n, j) += sinusoids_(n % T, j);
    }
    for (Block& block : blocks_) x = block.forward(x, B, T);  // (N, d)
    ntop_ = lnf_ ? lnf_->forward(x) : std::move(x);  // (N, d), what the readout reads
    // (N, V); b_out is added in the loss's pass over the rows
    logits_ = W_out_ ? linear_forward(ntop_, *W_out_, nullptr) : tied_output_forward(ntop_, *wte_, nullptr);
    ce_ = b_out_ ? bias_cross_entropy_forward(logits_, *b_out_, targets) : cross_entropy_forward(logits_, targets);
    return ce_.loss;
}

void Model::backward() {
    // (N, V), in the probabilities' place; b_out's gradient Σ_rows dlogits summed in the same pass
    const Mat dlogits = cross_entropy_backward(std::move(ce_), targets_, b_out_);
    Mat dx = W_out_ ? linear_backward(ntop_, dlogits, *W_out_, nullptr) : tied_output_backward(ntop_, dlogits, *wte_, nullptr);  // (N, d)
    if (lnf_) dx = lnf_->backward(dx);
    output_grad_norms_.assign(blocks_.size(), 0.0);
    for (std::size_t l = blocks_.size(); l-- > 0;) {
        output_grad_norms_[l] = std::sqrt(static_cast<double>(xt::sum(dx * dx)()));
        dx = blocks_[l].backward(dx);
    }
    embedding_backward(tokens_, T_, dx, *wte_, wpe_);  // the sinusoidal table is fixed: nothing to learn
}

const AttentionCache& Model::attention_cache(std::size_t layer) const {
    const MultiHeadAttention* attention = block(layer).attention();
    require(attention != nullptr, "Model::attention_cache", "block " + std::to_string(layer) + " has no attention (mixer = none)");
    return attention->cache();
}

Mat Model::block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T) {
    require(layer < blocks_.size(), "Model::block_forward",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(blocks_.size()) + " blocks");
    return blocks_[layer].forward(x, B, T);
}


}  // namespace attn::fast
