// A small causal language model whose pieces can be switched on one at a time, as in 003's ladder:
//
//   x = wte[token] (+ wpe[position])                         (N, d)       N = B·T
//   mixer:  none     h = x
//           uniform  h = x + avg(x W_v) W_o                   the prefix average of Section 9.1, of the raw
//                                                            embeddings: a LayerNorm per token before the
//                                                            average would let word order leak into it
//           learned  h = x + MHA(n(x)) W_o                   q = n(x) W_q, k = n(x) W_k, v = n(x) W_v
//           (without the residual: h = mixer output alone)
//   ffn:    o = h + W_2 gelu(n(h) W_1 + b_1) + b_2           when d_ff > 0, per position
//   logits = n(o) W_out + b_out                               (N, V)   or n(o) wteᵀ + b_out when tied
// where n is LayerNorm when `layernorm` (pre-norm, as GPT-2) and the identity otherwise. The average
// of the raw embeddings is order-blind: Σ (e_token + p_position) = Σ e_token + (a constant).
//
// Named after the paper's objects (minGPT): the layers are the library's forward/backward pairs.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/layers.hpp"
#include "attn/multi_head.hpp"
#include "attn/params.hpp"

namespace attn {

enum class Mixer { none, uniform, learned };

struct ModelConfig {
    std::size_t vocab = 0;     // V
    std::size_t max_T = 0;     // longest sequence, rows of wpe
    std::size_t d_model = 32;  // d
    std::size_t n_heads = 1;
    Mixer mixer = Mixer::learned;
    bool positions = true;     // learned absolute position embedding
    bool residual = true;      // h = x + mixer(x) rather than mixer(x)
    std::size_t d_ff = 0;      // hidden width of the per-position MLP; 0 = none
    bool tied = false;         // logits = h wteᵀ + b_out (the output layer shares the token table)
    bool layernorm = false;    // pre-norm: LayerNorm before the mixer, before the FFN and before the readout
};

class Model {
public:
    Model(const ModelConfig& config, std::uint64_t seed);

    // tokens and targets: B·T each (target −1 = not scored). Returns the mean cross-entropy and keeps
    // what the backward needs.
    double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T);
    void backward();  // gradients of the last forward's loss, accumulated into params()

    Parameters& params() { return params_; }
    const ModelConfig& config() const { return c_; }
    const Mat& logits() const { return logits_; }              // (N, V) of the last forward
    const Mat& probs() const { return ce_.probs; }             // (N, V)
    const Tensor3& attention_weights() const { return att_.weights; }  // (B·h, T, T)

private:
    ModelConfig c_;
    Parameters params_;
    Param *wte_ = nullptr, *wpe_ = nullptr, *wq_ = nullptr, *wk_ = nullptr, *wv_ = nullptr, *wo_ = nullptr;
    Param *w1_ = nullptr, *b1_ = nullptr, *w2_ = nullptr, *b2_ = nullptr, *wout_ = nullptr, *bout_ = nullptr;
    Param *ln1_g_ = nullptr, *ln1_b_ = nullptr, *ln2_g_ = nullptr, *ln2_b_ = nullptr, *lnf_g_ = nullptr, *lnf_b_ = nullptr;
    // the last forward's activations, for backward
    std::vector<int> tokens_, targets_;
    std::size_t B_ = 0, T_ = 0;
    Mat x_, nx_, q_, k_, v_, mixed_, h_, nh_, pre_ff_, ff_hidden_, out_, nout_, logits_;
    AttentionCache att_;
    LayerNormCache ln1_, ln2_, lnf_;
    CrossEntropy ce_;
};

}  // namespace attn
