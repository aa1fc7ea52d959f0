// Section 9.1's shuffle test (claim C05): the mean is blind to order. The summary at the last position,
// A[-1] @ x, is one vector for x and for x with its rows permuted.
#pragma once

#include <vector>

#include "core/tensor.hpp"

namespace attn::sec01 {

// The averaged context at the last position, A[-1] @ x: (T, d) → (d,). The one-number summary.
Vec context_average(const Mat& x);

// The summary of x (T, d) and of x permuted by perm (a permutation of 0..T-1).
struct ShuffleTest {
    Vec summary, shuffled_summary;  // (d,) each
    double max_abs_diff;
};
ShuffleTest shuffle_test(const Mat& x, const std::vector<std::size_t>& perm);

}  // namespace attn::sec01
