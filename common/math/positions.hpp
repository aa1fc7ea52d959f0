// Section 9.6: positions. Self-attention has no notion of order (permuting the tokens permutes the
// outputs), so position must be put in: added to the embeddings (sinusoidal, or a learned table), or
// put into the scores (RoPE rotates q and k; ALiBi adds a distance penalty).
#pragma once

#include <vector>

#include "core/tensor.hpp"

namespace attn {

// (T, d) with p[i][2t] = sin(i / base^(2t/d)), p[i][2t+1] = cos(i / base^(2t/d)); d even.
Mat sinusoidal_table(std::size_t T, std::size_t d, double base = 10000.0);

// The (d, d) block-diagonal rotation M_k with p_{i+k} = M_k p_i for every i: pair t is rotated by the
// angle k·ω_t, ω_t = base^(−2t/d). A fixed linear map: relative positions are linear in the table.
Mat sinusoidal_shift(std::size_t k, std::size_t d, double base = 10000.0);

// RoPE: rotate each pair (x_{2t}, x_{2t+1}) of row i by the angle (first_position + i)·ω_t.
// x (T, d), d even → (T, d). Applied to q and k, it makes q_t · k_i depend on t − i only.
Mat rope(const Mat& x, std::size_t first_position = 0, double base = 10000.0);
// RoPE's angles as the attention reads them, rope() of rows of (1, 0) pairs read back: (T, d_k), with cos t·ω_j
// in column 2j and sin t·ω_j in column 2j + 1.
Mat rope_angles(std::size_t T, std::size_t d_k);
// RoPE on merged heads: rotates each head's pairs (2j, 2j + 1) of row n by the angle (n mod T)·ω_j, or by its
// negative with sign = −1 (the backward: a rotation's transpose is its inverse). x (B·T, n_heads·d_k), angles
// from rope_angles(T, d_k).
void rotate_pairs(Mat& x, const Mat& angles, std::size_t n_heads, float sign);

// ALiBi: head j of h gets the slope m_j = 2^(−8 j / h), j = 1 … h, and adds −m_j (t − i) to the score
// of query t and key i ≤ t (the causal mask blocks i > t anyway).
std::vector<double> alibi_slopes(std::size_t n_heads);
Mat alibi_bias(std::size_t T, double slope);  // (T, T), 0 on the diagonal, −slope·(t − i) below, 0 above

}  // namespace attn
