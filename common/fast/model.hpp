// The fast engine's language model, attn::fast::Model: the twin of reference::Model (reference/model.hpp),
// the same parameters from a ModelConfig and a seed, computed by fast/block.hpp's Blocks:
//
//   x = wte[token] + position                      (N, d), N = B·T; position: wpe[t], the sinusoidal P[t], or
//                                                  nothing (none, and RoPE / ALiBi, which act inside attention)
//   x = block_l(x)  for l = 0 … n_layers − 1       (N, d)
//   logits = LN_f(x) W_out + b_out                 (N, V); LN_f under pre-norm only (post-norm's last LN_2
//                                                  already normalises); tied: logits = LN_f(x) wteᵀ (GPT-2)
//   loss = cross-entropy(logits, next tokens)
//
// 12_language_model trains it by default (every rung of Section 9.1's ladder: no context, the uniform average,
// + positions, + residual, one head replacing or added, several heads, + FFN, + LayerNorm; the 12-block stacks
// of Section 9.5); the sections train the reference model, and --engine fast this one. The GPU block is fed
// its weights. Options are named:
//
//   fast::Model ladder_top({.vocab = V, .max_T = 64, .d_model = 64, .n_heads = 4, .d_ff = 256, .norm = Norm::pre}, seed);
//   fast::Model gpt2(gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = 768, .n_heads = 12, .n_layers = 12}), seed);
#pragma once

#include <cstdint>
#include <vector>

#include "core/config.hpp"
#include "core/language_model.hpp"
#include "core/params.hpp"
#include "fast/block.hpp"
#include "fast/layers.hpp"

namespace attn::fast {



class Model : public LanguageModel {
public:
    Model(const ModelConfig& config, std::uint64_t seed);

    // tokens and targets: B·T each (target −1 = not scored) → the mean cross-entropy; keeps what backward needs
    double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) override;
    void backward() override;  // gradients of the last forward's loss, accumulated into params()

    Parameters& params() override { return params_; }
    const ModelConfig& config() const { return c_; }
    const Mat& logits() const override { return logits_; }  // (N, V) of the last forward
    std::string describe() const override { return attn::describe(c_); }

    std::size_t n_blocks() const { return blocks_.size(); }
    const Block& block(std::size_t layer) const { return blocks_.at(layer); }
    const AttentionCache& attention_cache(std::size_t layer = 0) const;  // q, k (after RoPE), v, weights
    const Tensor3& attention_weights(std::size_t layer = 0) const { return attention_cache(layer).weights; }  // (B·h, T, T)
    // One block on given activations with the model's weights: x (B·T, d_model) → y (B·T, d_model), so that a
    // test can hold a block to a reference implementation with the same weights (claim C32).
    Mat block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T);
    // L2 norm of the loss's gradient at each block's output, ∂L/∂y_l, from the last backward.
    const std::vector<double>& output_grad_norms() const { return output_grad_norms_; }

private:
    ModelConfig c_;
    Parameters params_;
    Param *wte_ = nullptr, *wpe_ = nullptr, *W_out_ = nullptr, *b_out_ = nullptr;
    std::vector<Block> blocks_;
    std::optional<LayerNorm> lnf_;
    std::vector<int> tokens_, targets_;
    std::size_t T_ = 0;
    Mat sinusoids_;  // (T, d) for the last T, when positions = sinusoidal
    Mat ntop_, logits_;
    CrossEntropy ce_;
    std::vector<double> output_grad_norms_;
};

}  // namespace attn::fast
