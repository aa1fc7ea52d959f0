// Section 9.3's multi-head attention sub-layer (W_q, W_k, W_v, the heads, W_o), measured: its parameters
// counted from a model's tensors, the divisor its forward really applies, and its wall-clock cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::sec05 {

// Each head's scores q_h k_hᵀ of q, k (T, d), unscaled: (h, T, T), one reference::matmul a head.
Tensor3 per_head_scores(const Mat& q, const Mat& k, std::size_t n_heads);

// The parameters of the attention sub-layer of a model with n_heads heads: W_q, W_k, W_v, W_o.
std::size_t attention_params(std::size_t d_model, std::size_t n_heads);

// The divisor as the attention forward applies it: an h-head reference::SelfAttention (unmasked, its weights drawn
// from seed) on x (T, d), its weights against softmax(q_h k_hᵀ / divisor) computed here from x W_q and x W_k, each
// head's slice. Returns max |difference|.
double forward_vs_divisor(const Mat& x, std::size_t n_heads, double divisor, std::uint64_t seed);

// Milliseconds for one causal reference::SelfAttention forward of x (T, d) (projections, heads, W_o), best of reps.
double attention_ms(const Mat& x, std::size_t n_heads, Rng& rng, int reps);

// The cost table: one forward of x (T, d) at 1, 2, 4 and 8 heads, best of 5 on one thread, and what it shows.
void print_cost_table(std::ostream& os, const Mat& x, Rng& rng);

}  // namespace attn::sec05
