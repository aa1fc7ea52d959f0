// Exercises for Section 9.6, "Mã hoá vị trí": positional encoding. Write the bodies in positions.cpp
// beside this file; check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec09]"`.
#pragma once

#include <cstddef>

#include "attn/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 9.1 — sinusoidal_table
/// The (T, d) table of the 2017 paper, d even: p[i][2t] = sin(i / 10000^(2t/d)),
/// p[i][2t+1] = cos(i / 10000^(2t/d)). Row 0 is (0, 1, 0, 1, …).
/// Hint: the frequency depends on the pair index t = column / 2, not on the column; compute in double.
Mat sinusoidal_table(std::size_t T, std::size_t d);

/// Exercise 9.2 — rope_rotate
/// RoPE: row i of x (T, d), d even, sits at position first_position + i. Rotate each pair
/// (x[2t], x[2t+1]) by the angle θ = position · 10000^(−2t/d):
///   (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ).
/// Then rope(q) · rope(k) depends only on the distance between their positions.
/// Hint: the same angles as the sinusoidal table; rotate, don't add.
Mat rope_rotate(const Mat& x, std::size_t first_position);

/// Exercise 9.3 — alibi_bias
/// ALiBi for head j (1-based) of n_heads: slope m = 2^(−8 j / n_heads); return the (T, T) bias with
/// −m (t − i) for i ≤ t and 0 above the diagonal (the causal mask blocks those anyway).
/// Hint: for 8 heads the slopes are 1/2, 1/4, …, 1/256; the diagonal is 0.
Mat alibi_bias(std::size_t T, std::size_t n_heads, std::size_t head);

}  // namespace ex
