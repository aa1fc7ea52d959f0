// Section 9.8: the exp of the tiled attention's fast path (attn/flash.hpp), eight floats at a time.
//
// Once SGEMM has done the products, what is left of a tile is the softmax half of the recurrence:
// per row, m' = max(m, max scores) and p = exp(scores − m'), l' = c·l + Σ p. std::exp is a library
// call per element that the compiler cannot vectorise; these functions run exp as a polynomial on
// 8 lanes at once (one AVX2 register), which is what keeps that half small next to the products.
//
// Only x ≤ 0 is ever needed (scores minus their running max), so the exp here is for x ≤ 0 alone:
// Cephes' expf, x = n ln 2 + r with |r| ≤ ln 2 / 2, exp(r) = 1 + r + r² P(r) with P a polynomial of
// degree 5, and 2ⁿ put into the exponent bits. Against the exact exp, over every float in [−86.5, 0]:
// at most 0.98 ulp, relative error 8.1e-8 (tests/common/test_vec_exp.cpp). exp(−∞) = 0, as the first
// tile's c = exp(−∞ − m') needs; arguments below −86.5 (exp < 3e-38: nothing next to a row sum ≥ 1)
// also give 0; NaN stays NaN.
//
// Same bits everywhere, so that the tiled attention is deterministic: the loops are compiled for AVX2
// and for baseline x86-64 and the loader picks the one the CPU runs, and neither may fuse a·b + c
// into one FMA (which rounds once instead of twice). One float and eight go through the same
// operations in the same order, so exp_nonpositive(x) is bit-equal to lane j of exp_row_sum.
#pragma once

#include <cstddef>

namespace attn {

// exp(x) for x ≤ 0 (a positive x gives garbage: the caller subtracts a max first).
float exp_nonpositive(float x);

// x[j] ← exp(x[j] − m) for j < n, in place: a row of scores becomes its unnormalised weights p, for
// m ≥ every x[j] (attn/vmath.hpp's row_max gives the max). Returns Σ_j p_j, summed lane by lane over the 8 lanes and then over the lanes in order.
float exp_row_sum(float* x, std::size_t n, float m);

}  // namespace attn
