// Section 9.3's heads: the feature axis of q, k and v cut into n_heads slices of d_head = d_model / n_heads
// columns, one matrix per (sequence, head), and put back side by side. Both engines split and merge with these.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace attn {

// (B·T, n_heads·d_head) → (B·n_heads, T, d_head), and back.
Tensor3 split_heads(const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads);
Mat merge_heads(const Tensor3& x, std::size_t B, std::size_t T, std::size_t n_heads);

// The checks split_heads makes (n_heads divides x's width, x holds B·T rows), for code that reads the heads
// in place without splitting them; throws attn::Error naming x's shape.
void check_heads(const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads);

}  // namespace attn
