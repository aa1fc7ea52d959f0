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
// Positions (Section 9.6), when `positions` is on, enter in one of four ways (`position`):
//   learned     x = wte[token] + wpe[t]                  a trained table of max_T rows
//   sinusoidal  x = wte[token] + P[t]                     P = sinusoidal_table(T, d), fixed, any T
//   rope        q_t, k_t rotated by t·ω (each head's pairs, positions.hpp's rope); the backward rotates
//               dq, dk back by −t·ω, since a rotation's transpose is its inverse
//   alibi       scores + (−m_j (t − i)) for head j (alibi_slopes), a constant: the backward is unchanged
// RoPE and ALiBi act on the learned scores, so they need the learned mixer. `scale = false` drops the
// 1/√d_k of the scores (Section 9.2's ablation), and `d_k` sets the width of q and k per head apart from
// d_model / n_heads (W_q, W_k are then (d, n_heads·d_k)), so that head width can grow while the rest of
// the model stays the same size.
//
// Named after the paper's objects (minGPT): the layers are the library's forward/backward pairs.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/language_model.hpp"
#include "attn/layers.hpp"
#include "attn/multi_head.hpp"
#include "attn/params.hpp"

namespace attn {

enum class Mixer { none, uniform, learned };
enum class PositionKind { learned, sinusoidal, rope, alibi };
const char* position_name(PositionKind kind);  // "learned", "sinusoidal", "RoPE", "ALiBi"

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
    PositionKind position = PositionKind::learned;  // how `positions` enter (above)
    bool scale = true;         // divide the scores by √d_k
    std::size_t d_k = 0;       // width of q and k per head; 0 = d_model / n_heads
};

class Model : public LanguageModel {
public:
    Model(const ModelConfig& config, std::uint64_t seed);

    // tokens and targets: B·T each (target −1 = not scored). Returns the mean cross-entropy and keeps
    // what the backward needs.
    double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B, std::size_t T) override;
    void backward() override;  // gradients of the last forward's loss, accumulated into params()

    Parameters& params() override { return params_; }
    const ModelConfig& config() const { return c_; }
    const Mat& logits() const override { return logits_; }     // (N, V) of the last forward
    const Mat& probs() const { return ce_.probs; }             // (N, V)
    const Tensor3& attention_weights() const { return att_.weights; }  // (B·h, T, T)
    const AttentionCache& attention_cache() const { return att_; }     // q, k (rotated by RoPE), v, weights, scale

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
    Mat sinusoids_;     // (T, d) for the last T, when position = sinusoidal
    Mat rope_angles_;   // (T, d_k) cos t·ω in even columns, sin t·ω in odd ones, when position = rope
    Tensor3 alibi_;     // (n_heads, T, T), when position = alibi
    void prepare_positions(std::size_t T);  // the three above, for this T
    LayerNormCache ln1_, ln2_, lnf_;
    CrossEntropy ce_;
};

}  // namespace attn
