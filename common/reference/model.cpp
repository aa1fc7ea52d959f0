#include "reference/model.hpp"

#include <functional>

#include "core/blas.hpp"
#include "core/error.hpp"
#include "math/positions.hpp"
#include "reference/compose.hpp"

namespace attn::reference {

// --- the chapter's block --------------------------------------------------------------------------------------

Block::Block(Parameters& params, const std::string& prefix, const AttentionConfig& attention, std::size_t d_ff, Init init, Rng& rng)
    : ln1_(params, prefix + "ln1", attention.d_model),
      attn_(params, prefix, attention, init, rng),
      ln2_(params, prefix + "ln2", attention.d_model),
      ffn_(params, prefix, attention.d_model, d_ff, init, rng),
      d_ff_(d_ff) {}

Mat Block::forward(const Mat& x, std::size_t T) {
    const Mat a = x + attn_.forward(ln1_.forward(x, T), T);  // (B·T, d)
    return a + ffn_.forward(ln2_.forward(a, T), T);          // (B·T, d)
}

Mat Block::backward(const Mat& dy) {
    const Mat da = dy + ln2_.backward(ffn_.backward(dy));  // a reaches y twice: straight, and through the FFN
    return da + ln1_.backward(attn_.backward(da));         // so does x reach a
}

std::vector<Block::Traced> Block::trace() const {
    const Tensor3& w = attn_.weights();  // (B·h, T, T): B and T of the last forward
    require(w.size() > 0, "reference::Block::trace", "no forward has run yet");
    const AttentionConfig& c = attn_.config();
    const std::size_t h = c.n_heads, T = w.shape(1), B = w.shape(0) / h, d = c.d_model;
    // every other shape follows from B, T and the block's widths d, h·d_k and d_ff
    return {{"x", "the block's input, one row per token", {B * T, d}},
            {"LN_1(x)", "each row normalised", {B * T, d}},
            {"q = n W_q + b_q", "queries, all heads side by side", {B * T, h * c.d_k}},
            {"k, v", "keys and values, the same shape", {B * T, h * c.d_k}},
            {"q, k, v per head", "split along the features: (B·h, T, d_head)", {B * h, T, c.d_k}},
            {"weights", "softmax(q kᵀ / √d_head + causal mask), per head", {B * h, T, T}},
            {"heads", "weights v, merged back", {B * T, d}},
            {"a = x + heads W_o + b_o", "after the first residual", {B * T, d}},
            {"hidden = gelu(n W_1 + b_1)", "the FFN's 4d-wide middle", {B * T, d_ff_}},
            {"y = a + hidden W_2 + b_2", "the block's output, the next one's input", {B * T, d}}};
}

// --- the model ------------------------------------------------------------------------------------------------

Model::Model(const ModelConfig& config, std::uint64_t seed, Weights weights) : c_(config) {
    const std::size_t d = c_.d_model;
    require(c_.vocab > 0 && c_.max_T > 0 && d > 0 && c_.n_layers > 0 && c_.n_heads > 0 && d % c_.n_heads == 0, "reference::Model",
            "vocab, max_T, d_model, n_layers and n_heads must be positive, and n_heads must divide d_model = " + std::to_string(d));
    if (c_.d_k == 0) c_.d_k = d / c_.n_heads;
    require(c_.positions != Positions::sinusoidal || d % 2 == 0, "reference::Model", "sinusoidal positions need an even d_model");
    require(c_.positions != Positions::rope || c_.d_k % 2 == 0, "reference::Model", "RoPE rotates pairs: d_k must be even");
    require((c_.positions != Positions::rope && c_.positions != Positions::alibi) || c_.mixer == Mixer::learned, "reference::Model",
            std::string(positions_name(c_.positions)) + " positions act on learned scores: they need mixer = learned");
    blas_on_one_thread();  // the reference engine runs on one thread, OpenBLAS's products too
    if (weights == Weights::shapes_only) params_.shapes_only();
    Rng rng(seed, init_stream(c_.init));
    wte_ = &params_.normal("wte", c_.vocab, d, embedding_std(c_.init), rng);
    if (c_.positions == Positions::learned) wpe_ = &params_.normal("wpe", c_.max_T, d, embedding_std(c_.init), rng);
    const AttentionConfig attention{.d_model = d, .n_heads = c_.n_heads, .d_k = c_.d_k, .mixer = c_.mixer, .positions = c_.positions,
                                    .scale = c_.scale, .causal = c_.causal, .biases = c_.biases,
                                    .output_projection = c_.output_projection, .output_bias = c_.output_bias};
    for (std::size_t l = 0; l < c_.n_layers; ++l) {
        std::function<const Tensor3&()> weights;
        blocks_.push_back(make_block(params_, "block" + std::to_string(l) + ".", c_, attention, rng, weights));
        weights_of_.push_back(weights);
    }
    if (c_.norm == Norm::pre) lnf_.emplace(params_, "lnf", d);
    if (c_.head == Head::untied) readout_ = std::make_unique<Linear>(params_, "W_out", "b_out", d, c_.vocab, init_std(c_.init, d), rng);
    else readout_ = std::make_unique<TiedReadout>(*wte_);
}

double Model::forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) {
    require(tokens.size() == B * T && targets.size() == B * T, "reference::Model::forward",
            std::to_string(tokens.size()) + " tokens and " + std::to_string(targets.size()) + " targets for B·T = " + std::to_string(B) + "·" + std::to_string(T));
    require(T <= c_.max_T, "reference::Model::forward", "T = " + std::to_string(T) + " exceeds max_T = " + std::to_string(c_.max_T));
    require_weights("reference::Model::forward");
    tokens_ = tokens, T_ = T;
    const Mat sinusoids = c_.positions == Positions::sinusoidal ? sinusoidal_table(T, c_.d_model) : Mat();  // (T, d)
    Mat x = Mat::from_shape({B * T, c_.d_model});  // (B·T, d)
    for (std::size_t n = 0; n < tokens.size(); ++n) {
        if (tokens[n] < 0 || static_cast<std::size_t>(tokens[n]) >= c_.vocab)  // (the message built only then: every token, every step)
            throw Error("reference::Model::forward: token " + std::to_string(tokens[n]) + " at " + std::to_string(n) +
                        " is outside the vocabulary of " + std::to_string(c_.vocab));
        xt::row(x, n) = xt::row(wte_->value, tokens[n]);
        if (wpe_) xt::row(x, n) += xt::row(wpe_->value, n % T);
        if (sinusoids.size() > 0) xt::row(x, n) += xt::row(sinusoids, n % T);
    }
    for (auto& block : blocks_) x = block->forward(x, T);  // (B·T, d)
    if (lnf_) x = lnf_->forward(x, T);
    logits_ = readout_->forward(x, T);  // (B·T, V)
    return loss_.forward(logits_, targets);
}

void Model::backward() {
    require_weights("reference::Model::backward");
    Mat dx = readout_->backward(loss_.backward());  // (B·T, d)
    if (lnf_) dx = lnf_->backward(dx);
    for (auto block = blocks_.rbegin(); block != blocks_.rend(); ++block) dx = (*block)->backward(dx);
    for (std::size_t n = 0; n < tokens_.size(); ++n) {  // the rows of the tables that were read get their gradient
        xt::row(wte_->grad, tokens_[n]) += xt::row(dx, n);
        if (wpe_) xt::row(wpe_->grad, n % T_) += xt::row(dx, n);
    }
}

Mat Model::block_forward(std::size_t layer, const Mat& x, std::size_t T) {
    require_weights("reference::Model::block_forward");
    require(layer < blocks_.size(), "reference::Model::block_forward",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(blocks_.size()) + " blocks");
    return blocks_[layer]->forward(x, T);
}

const Block& Model::block(std::size_t layer) const {
    require(layer < blocks_.size(), "reference::Model::block",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(blocks_.size()) + " blocks");
    const auto* block = dynamic_cast<const Block*>(blocks_[layer].get());
    require(block != nullptr, "reference::Model::block",
            "block " + std::to_string(layer) + " is not the chapter's pre-norm Block (x = x + attn(ln1(x)); x = x + ffn(ln2(x))) "
            "but the same pieces composed otherwise: its config has " + not_the_chapters_block(c_));
    return *block;
}

double Model::block_grad_norm(std::size_t layer) const {
    require_weights("reference::Model::block_grad_norm");
    require(layer < blocks_.size(), "reference::Model::block_grad_norm",
            "layer " + std::to_string(layer) + " of a stack of " + std::to_string(blocks_.size()) + " blocks");
    const std::string prefix = "block" + std::to_string(layer) + ".";  // its parameters, in the order they were made
    double sq = 0;
    for (const Param& p : params_.all())
        if (p.name.rfind(prefix, 0) == 0)
            for (float g : p.grad) sq += static_cast<double>(g) * g;
    return std::sqrt(sq);
}

void Model::require_weights(const char* where) const {
    require(!params_.is_shapes_only(), where, "this model was built with Weights::shapes_only, to be counted: it has no weights to run");
}

const Tensor3& Model::attention_weights(std::size_t layer) const {
    require(layer < weights_of_.size() && weights_of_[layer], "reference::Model::attention_weights",
            "block " + std::to_string(layer) + " has no attention (mixer = none), or there is no such block");
    return weights_of_[layer]();
}

}  // namespace attn::reference
