// Sections 9.3–9.5: the Transformer block and its three parts, each an object named after the paper with a
// forward and a backward over plain tensors (llm.c's layer pairs; minGPT's Block):
//
//   LayerNorm            y = gain ⊙ (x − mean) / sqrt(var + eps) + bias, per row          (N, d) → (N, d)
//   MultiHeadAttention   q, k, v = x W_{q,k,v} (+ b), h heads, causal, · W_o (+ b_o)       (B·T, d) → (B·T, d)
//   FeedForward          W_2 gelu(x W_1 + b_1) + b_2, per position                        (N, d) → (N, d)
//   Block                pre-norm (GPT-2):   a = x + MHA(LN_1(x)),  y = a + FFN(LN_2(a))
//                        post-norm (2017):   a = LN_1(x + MHA(x)),  y = LN_2(a + FFN(a))
//                        no norm:            a = x + MHA(x),        y = a + FFN(a)
//                        without the residual each sub-layer's output replaces its input: a = MHA(x)
//
// Every forward keeps what its backward needs; every backward *accumulates* its parameters' gradients
// (+=) and *returns* the gradient of its input. N = B·T rows, one per token of B sequences of T tokens.
// The rungs of Section 9.1's ladder switch parts off (BlockConfig below): no attention, a uniform
// average instead of learned weights, no FFN, no LayerNorm, no residual.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "fast/multi_head.hpp"

namespace attn::fast {

// --- LayerNorm ---------------------------------------------------------------------------------------------
class LayerNorm {
public:
    LayerNorm(Parameters& params, const std::string& name, std::size_t d);  // name.gain = 1, name.bias = 0
    Mat forward(const Mat& x);    // (N, d) → (N, d)
    Mat backward(const Mat& dy);  // (N, d) → dx (N, d)

private:
    Param *gain_, *bias_;
    LayerNormCache cache_;
};

// --- MultiHeadAttention ----------------------------------------------------------------------------------------

class MultiHeadAttention {
public:
    MultiHeadAttention(Parameters& params, const std::string& prefix, const AttentionConfig& config, Init init, Rng& rng);
    // x is kept for the backward: pass it with std::move when the caller is done with it
    Mat forward(Mat x, std::size_t B, std::size_t T);       // (B·T, d_model) → (B·T, d_model)
    Mat backward(const Mat& dy);                             // (B·T, d_model) → dx (B·T, d_model)
    const AttentionCache& cache() const { return cache_; }  // q, k (after RoPE), v, weights (B·h, T, T)

private:
    void prepare_positions(std::size_t T);  // RoPE's angles or ALiBi's bias for this T
    AttentionConfig c_;
    Param *W_q_ = nullptr, *b_q_ = nullptr, *W_k_ = nullptr, *b_k_ = nullptr, *W_v_ = nullptr, *b_v_ = nullptr;
    Param *W_o_ = nullptr, *b_o_ = nullptr;
    std::size_t B_ = 0, T_ = 0;
    Mat x_, heads_;
    AttentionCache cache_;
    Mat rope_angles_;  // (T, d_k): cos t·ω in even columns, sin t·ω in odd ones
    Tensor3 alibi_;    // (n_heads, T, T)
};

// --- FeedForward ---------------------------------------------------------------------------------------------------
class FeedForward {
public:
    FeedForward(Parameters& params, const std::string& prefix, std::size_t d_model, std::size_t d_ff, Init init, Rng& rng);
    Mat forward(Mat x);           // (N, d_model) → (N, d_model), through (N, d_ff); x is kept for the backward
    Mat backward(const Mat& dy);  // (N, d_model) → dx (N, d_model)

private:
    Param *W_1_, *b_1_, *W_2_, *b_2_;
    Mat x_, slope_, hidden_;  // slope_: gelu'(x W_1 + b_1)
};

// --- Block ---------------------------------------------------------------------------------------------------------

class Block {
public:
    // Parameters are named prefix + "ln1.gain", "W_q", "b_q", …, "ln2.bias", "W_1", "b_1", "W_2", "b_2".
    Block(Parameters& params, const std::string& prefix, const BlockConfig& config, Init init, Rng& rng);
    Mat forward(const Mat& x, std::size_t B, std::size_t T);  // (B·T, d_model) → (B·T, d_model)
    Mat backward(const Mat& dy);                               // (B·T, d_model) → dx (B·T, d_model)

    const MultiHeadAttention* attention() const { return attention_ ? &*attention_ : nullptr; }
    std::size_t param_count() const;  // every scalar of this block
    double grad_norm() const;         // L2 norm of this block's gradients

private:
    BlockConfig c_;
    std::vector<Param*> params_;  // this block's, for param_count and grad_norm
    std::optional<LayerNorm> ln1_, ln2_;
    std::optional<MultiHeadAttention> attention_;
    std::optional<FeedForward> ffn_;
};

}  // namespace attn::fast
