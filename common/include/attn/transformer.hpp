// Sections 9.5 and 9.8: the Transformer block, stacked — the GPT-2 shape.
//
//   x = wte[token] + wpe[position]                                      (N, d), N = B·T
//   each of n_layers blocks, pre-norm (GPT-2, and almost every model since 2019):
//       a = x + MHA(LN_1(x))            MHA: q, k, v = n W_{q,k,v} + b, causal, n_heads heads, W_o + b_o
//       y = a + FFN(LN_2(a))            FFN: W_2 gelu(n W_1 + b_1) + b_2, d_ff = 4d
//   or post-norm (the 2017 paper):
//       a = LN_1(x + MHA(x)),  y = LN_2(a + FFN(a))
//   logits = LN_f(y) wteᵀ   (pre-norm; post-norm's last LN_2 already normalises, so LN_f is skipped)
//
// The output layer is tied to the token table, as in GPT-2, so a block holds 12 d² + 13 d parameters
// and the model V d + T_max d + n_layers (12 d² + 13 d) + 2 d — counted below from the tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/language_model.hpp"
#include "attn/layers.hpp"
#include "attn/multi_head.hpp"
#include "attn/params.hpp"

namespace attn {

enum class Norm { pre, post };

struct TransformerConfig {
    std::size_t vocab = 0, max_T = 0, d_model = 64, n_heads = 4, n_layers = 2;
    std::size_t d_ff = 0;   // 0 means 4 d_model
    Norm norm = Norm::pre;
    // Initialisation: GPT-2's N(0, 0.02²) for every matrix and table (init_std = 0.02), or, with
    // init_std = 0, PyTorch's defaults as the chapter's models had them: embeddings N(0, 1) and each
    // weight matrix with std 1/sqrt(3 fan_in) (nn.Linear's uniform bound 1/sqrt(fan_in)).
    float init_std = 0.02f;
    // GPT-2 ties the output layer to the token table (logits = h wteᵀ); untied, it is its own linear
    // layer (d, V) with a bias, as in a PyTorch model with a separate nn.Linear head.
    bool tied = true;
};

class Transformer : public LanguageModel {
public:
    Transformer(const TransformerConfig& config, std::uint64_t seed);

    double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) override;
    void backward() override;

    Parameters& params() override { return params_; }
    const TransformerConfig& config() const { return c_; }
    const Mat& logits() const override { return logits_; }
    const Tensor3& attention_weights(std::size_t layer) const { return blocks_.at(layer).cache.att.weights; }  // (B·h, T, T)
    std::size_t block_param_count(std::size_t layer);  // all scalars of one block
    double block_grad_norm(std::size_t layer);         // L2 norm of one block's gradients
    // One block on given activations, with the weights as params() holds them ("block0.W_q", …, named in
    // the constructor): x (B·T, d_model) → y (B·T, d_model). Sets the batch shape the attention splits by,
    // so that a test can run a block against a reference implementation with the same weights (claim C32).
    Mat block_forward(std::size_t layer, const Mat& x, std::size_t B, std::size_t T);
    // The tensors of one block's last forward, in the order the block computes them, with their shapes:
    // ("x", {B·T, d}), ("LN_1(x)", …), ("q", …), …, ("y", …) — what a learner traces by hand.
    struct Traced {
        std::string name, meaning;
        std::vector<std::size_t> shape;
    };
    std::vector<Traced> block_trace(std::size_t layer) const;
    // L2 norm of the loss's gradient at each block's output, ∂L/∂y_l, from the last backward.
    const std::vector<double>& output_grad_norms() const { return output_grad_norms_; }

private:
    struct Cache {
        Mat x, n1, q, k, v, mixed, s1, a, n2, pre_ff, hidden, s2, y;
        AttentionCache att;
        LayerNormCache ln1, ln2;
    };
    struct Block {
        Param *ln1_g, *ln1_b, *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *ln2_g, *ln2_b, *w1, *b1, *w2, *b2;
        std::vector<Param*> all;
        Cache cache;
    };
    Mat block_forward(Block& b, const Mat& x);
    Mat block_backward(Block& b, const Mat& dy);

    TransformerConfig c_;
    Parameters params_;
    Param *wte_ = nullptr, *wpe_ = nullptr, *lnf_g_ = nullptr, *lnf_b_ = nullptr, *head_w_ = nullptr, *head_b_ = nullptr;
    std::vector<Block> blocks_;
    std::vector<int> tokens_, targets_;
    std::size_t B_ = 0, T_ = 0;
    Mat top_, ntop_, logits_;
    LayerNormCache lnf_;
    CrossEntropy ce_;
    std::vector<double> output_grad_norms_;
};

}  // namespace attn
