// The reference engine's token mixers (Mục 9.1–9.4, 9.6): how a position reads the others.
//
//   SelfAttention    learned weights, h heads:  q, k, v = x W_q, x W_k, x W_v  (+ biases)
//                    per sequence and head:     weights = softmax(q kᵀ / √d_k + ALiBi's bias, causal mask)
//                                               head = weights v,   heads side by side · W_o (+ b_o)
//                    RoPE rotates q and k before their product; ALiBi adds −m_h (t − i) to head h's scores.
//   UniformAverage   Mục 9.1's baseline: every position averages the values of its prefix, weights 1/(t+1),
//                    nothing learned but W_v and W_o.
//
// SelfAttention splits q, k and v into one matrix per sequence and head (split_heads, Mục 9.3), runs Definition 9.1
// on each (math/attention.hpp's attention(), the function 02_soft_lookup prints step by step), one (T, T) matrix of
// weights at a time, and merges the heads back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "reference/layers.hpp"

namespace attn::reference {

class SelfAttention : public Layer {
public:
    // Parameters prefix + "W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o" (biases as config says)
    SelfAttention(Parameters& params, const std::string& prefix, const AttentionConfig& config, Init init, Rng& rng);
    Mat forward(const Mat& x, std::size_t T) override;  // (B·T, d_model) → (B·T, d_model)
    Mat backward(const Mat& dy) override;
    const Tensor3& weights() const { return weights_; }  // (B·h, T, T) of the last forward
    const AttentionConfig& config() const { return c_; }  // with d_k resolved

private:
    AttentionConfig c_;
    float scale_;
    Linear q_proj_, k_proj_, v_proj_;
    std::optional<Linear> out_proj_;
    std::size_t T_ = 0;
    Tensor3 q_, k_, v_;  // (B·h, T, d_k), (B·h, T, d_k), (B·h, T, d_v): per sequence and head, after RoPE
    Tensor3 weights_;    // (B·h, T, T)
};

class UniformAverage : public Layer {
public:
    // Parameters prefix + "W_v", "b_v", "W_o", "b_o" (biases as config says)
    UniformAverage(Parameters& params, const std::string& prefix, const AttentionConfig& config, Init init, Rng& rng);
    Mat forward(const Mat& x, std::size_t T) override;  // (B·T, d_model) → (B·T, d_model)
    Mat backward(const Mat& dy) override;
    const Tensor3& weights() const { return weights_; }  // (B·h, T, T): the same matrix for every sequence and head

private:
    AttentionConfig c_;
    Linear v_proj_;
    std::optional<Linear> out_proj_;
    std::size_t T_ = 0;
    Tensor3 weights_;
};

}  // namespace attn::reference
