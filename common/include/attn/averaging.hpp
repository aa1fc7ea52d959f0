// Section 9.1 from 003: averaging a growing prefix, three ways that are one computation.
#pragma once

#include <vector>

#include "attn/tensor.hpp"

namespace attn {

Mat prefix_mean_loop(const Mat& x);        // (T, d) → (T, d): row t is the mean of x[0..t], as a loop
Mat averaging_matrix(std::size_t T);       // (T, T): lower-triangular, row t holds 1/(t+1) — A @ x averages
Mat causal_zero_scores(std::size_t T);     // (T, T): zeros on and below the diagonal, −∞ above

struct ThreeWays {
    Mat loop, matmul, softmax;                 // (T, d) each
    double loop_vs_matmul, loop_vs_softmax;    // max |diff|
};
ThreeWays average_three_ways(const Mat& x);  // x: (T, d)

// Shuffle test: the last row of A applied to x and to x with its rows permuted. (T, d), perm of 0..T-1.
struct ShuffleTest {
    Vec summary, shuffled_summary;  // (d,) each
    double max_abs_diff;
};
ShuffleTest shuffle_test(const Mat& x, const std::vector<std::size_t>& perm);

// The averaged context at the last position, A[-1] @ x: (T, d) → (d,). The one-number summary.
Vec context_average(const Mat& x);

// Row i of the result is x[rows[i]]: a permutation of x, or an embedding lookup of token ids.
Mat gather_rows(const Mat& x, const std::vector<std::size_t>& rows);

}  // namespace attn
