// Section 9.1, "Attention như phép tra cứu mềm": averaging a growing prefix, three ways that are one computation — a loop, a
// product with the averaging matrix A, and a softmax of a −∞-masked zero matrix (claim C04).
#pragma once

#include "core/tensor.hpp"

namespace attn::sec01 {

Mat prefix_mean_loop(const Mat& x);     // (T, d) → (T, d): row t is the mean of x[0..t], as a loop
Mat causal_zero_scores(std::size_t T);  // (T, T): zeros on and below the diagonal, −∞ above; softmax → A

struct ThreeWays {
    Mat loop, matmul, softmax;                 // (T, d) each
    double loop_vs_matmul, loop_vs_softmax;    // max |diff|
};
ThreeWays average_three_ways(const Mat& x);  // x: (T, d)

}  // namespace attn::sec01
