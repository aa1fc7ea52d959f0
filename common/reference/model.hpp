// The reference engine's Transformer block and language model (Mục 9.5, 9.7): the chapter's code, plain.
//
//   x = wte[token] (+ wpe[t] or the sinusoidal P[t])     (B·T, d)
//   x = block(x), once per layer                         (B·T, d)
//   logits = LN_f(x) W_out + b_out   (tied: LN_f(x) wteᵀ) (B·T, V)
//   loss = cross-entropy(logits, next tokens)
//
// The block the chapter writes is `Block` below, pre-norm, two lines. The ladder of Mục 9.1 and the post-norm
// of Mục 9.5 are the same pieces composed otherwise (make_block, reference/compose.hpp): a mixer, an FFN,
// LayerNorms, residual sums.
// The model takes the same ModelConfig as the fast engine's attn::fast::Model and, for a seed, the same weights,
// parameter by parameter: either engine trains it, and either reads the other's checkpoints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/language_model.hpp"
#include "reference/attention.hpp"
#include "reference/layers.hpp"

namespace attn::reference {

// The chapter's block, pre-norm (GPT-2):  x = x + attn(ln1(x));  x = x + ffn(ln2(x))
class Block : public Layer {
public:
    Block(Parameters& params, const std::string& prefix, const AttentionConfig& attention, std::size_t d_ff, Init init, Rng& rng);
    Mat forward(const Mat& x, std::size_t T) override;  // (B·T, d) → (B·T, d)
    Mat backward(const Mat& dy) override;
    const SelfAttention& attention() const { return attn_; }
    // The tensors of the last forward, in the order the block computes them, with their shapes: what a learner
    // traces by hand, ("x", {B·T, d}), ("LN_1(x)", {B·T, d}), ("q = n W_q + b_q", …), …, ("y", {B·T, d}).
    struct Traced {
        std::string name, meaning;
        std::vector<std::size_t> shape;
    };
    std::vector<Traced> trace() const;

private:
    LayerNorm ln1_;  // declared in the order the parameters are made: ln1, W_q … b_o, ln2, W_1 … b_2
    SelfAttention attn_;
    LayerNorm ln2_;
    FeedForward ffn_;
    std::size_t d_ff_;  // the FFN's hidden width
};

// What a Model's parameters hold: weights drawn from `seed`, or only tensors of the right shapes, for a model that is
// counted and never run (Parameters::shapes_only): its forward, backward, block_forward and block_grad_norm throw, as
// do AdamW and copy_weights given its parameters.
enum class Weights { drawn, shapes_only };

class Model : public LanguageModel {
public:
    Model(const ModelConfig& config, std::uint64_t seed, Weights weights = Weights::drawn);
    double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) override;
    void backward() override;
    Parameters& params() override { return params_; }
    const Mat& logits() const override { return logits_; }  // (B·T, V) of the last forward
    std::string describe() const override { return attn::describe(c_); }
    const ModelConfig& config() const { return c_; }
    const Tensor3& attention_weights(std::size_t layer = 0) const;  // (B·h, T, T) of the last forward
    Mat block_forward(std::size_t layer, const Mat& x, std::size_t T);  // one block alone: (B·T, d) → (B·T, d)
    // Block `layer` as the chapter's Block, to trace: only the pre-norm GPT-2 configuration (learned attention,
    // an FFN, residual sums) makes one; any other throws Error naming the layer and what its config lacks.
    const Block& block(std::size_t layer) const;
    double block_grad_norm(std::size_t layer) const;  // the L2 norm of block `layer`'s parameter gradients

private:
    void require_weights(const char* where) const;  // throws for a model of Weights::shapes_only

    ModelConfig c_;
    Parameters params_;
    Param* wte_ = nullptr;
    Param* wpe_ = nullptr;
    std::vector<std::unique_ptr<Layer>> blocks_;
    std::vector<std::function<const Tensor3&()>> weights_of_;  // each block's attention weights, where it has a mixer
    std::optional<LayerNorm> lnf_;
    std::unique_ptr<Layer> readout_;
    CrossEntropy loss_;
    std::vector<int> tokens_;
    std::size_t T_ = 0;
    Mat logits_;
};

}  // namespace attn::reference
