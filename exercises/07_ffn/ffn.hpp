// Exercises for Section 9.5: the feed-forward network. Write the bodies in ffn.cpp beside this file;
// check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec07]"`.
#pragma once

#include "attn/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 7.1 — gelu
/// The exact GELU, elementwise: gelu(x) = x Φ(x) = ½ x (1 + erf(x / √2)).
/// gelu(0) = 0, gelu(1) ≈ 0.8413, gelu(−1) ≈ −0.1587.
/// Hint: std::erf; Φ is the standard normal's cumulative distribution.
Mat gelu(const Mat& x);

/// Exercise 7.2 — gelu_tanh
/// GPT-2's approximation: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))). Within ~5e-4 of gelu everywhere.
/// Hint: compute √(2/π) once.
Mat gelu_tanh(const Mat& x);

/// Exercise 7.3 — ffn_forward
/// The position-wise FFN: x (N, d), W_1 (d, d_ff), b_1 (1, d_ff), W_2 (d_ff, d), b_2 (1, d) →
/// gelu(x W_1 + b_1) W_2 + b_2, shape (N, d). Each row is computed from that row of x alone.
/// Hint: two affine maps with your gelu between them; add the bias row to every row.
Mat ffn_forward(const Mat& x, const Mat& W_1, const Mat& b_1, const Mat& W_2, const Mat& b_2);

}  // namespace ex
