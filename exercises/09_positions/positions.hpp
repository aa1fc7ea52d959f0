// Exercises for Section 9.6, "Mã hoá vị trí": positional encoding. Write the bodies in positions.cpp
// beside this file; check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec09]"`.
#pragma once

#include <cstddef>

#include "attn/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 9.1 — sinusoidal_table
/// The (T, d) table of the 2017 paper, d even: row i encodes position i; columns 2t and 2t+1 form pair t,
/// the sine and the cosine (in that order) of one angle i · ω_t, with ω_t falling geometrically from 1
/// (t = 0) towards 1/10000 across the pairs. Row 0 is (0, 1, 0, 1, …).
/// Hint 1: the frequency depends on the pair index t = column / 2, not on the column; both columns of a
///         pair share it. Compute the angle in double.
/// Hint 2: p[i][2t] = sin(i / 10000^(2t/d)), p[i][2t+1] = cos(i / 10000^(2t/d)) — and 2t/d is a
///         fraction: in integer arithmetic it is 0.
Mat sinusoidal_table(std::size_t T, std::size_t d);

/// Exercise 9.2 — rope_rotate
/// RoPE: x (T, d), d even, to (T, d). Row i sits at position first_position + i. Each pair of columns
/// (2t, 2t+1) of the row is rotated, counter-clockwise, by an angle proportional to the position, with
/// the same frequencies ω_t as 9.1's table. Then rope(q) · rope(k) depends only on the distance between
/// their positions.
/// Hint 1: rotate, don't add: a 2-D rotation of (x[2t], x[2t+1]) by θ = position · ω_t.
/// Hint 2: θ = (first_position + i) · 10000^(−2t/d);
///         (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ).
Mat rope_rotate(const Mat& x, std::size_t first_position);

/// Exercise 9.3 — alibi_bias
/// ALiBi for head j (1-based, 1 ≤ j ≤ n_heads): return the (T, T) bias added to the scores, 0 on the
/// diagonal and above it (the causal mask blocks those anyway), and below it a penalty growing linearly
/// with the distance t − i, at a slope m_j that halves from head to head when n_heads = 8
/// (1/2, 1/4, …, 1/256), for any n_heads — 12 and 6 too, where the exponent is not a whole number.
/// Hint 1: the slope is a power of 2 whose exponent is proportional to j / n_heads.
/// Hint 2: m = 2^(−8 j / n_heads), computed in floating point (8 j / n_heads in integers truncates: for
///         12 heads, head 1 would get slope 1); bias(t, i) = −m (t − i) for i ≤ t.
Mat alibi_bias(std::size_t T, std::size_t n_heads, std::size_t head);

}  // namespace ex
