// Exercises for Section 9.4, "Mặt nạ": masks. Write the bodies in masking.cpp beside this file;
// check with `tools/progress.sh` or `./build/bin/exercise_tests "[sec06]"`.
#pragma once

#include <vector>

#include "attn/tensor.hpp"

namespace ex {

using attn::Mask;
using attn::Vec;

/// Exercise 6.1 — causal_mask
/// Return the (T, T) causal mask in the "true = keep" convention: query t may read key i when i ≤ t.
/// The diagonal is kept: position t predicts the *next* token, so reading itself leaks nothing.
/// Hint: Mask::from_shape({T, T}), then keep(t, i) = (i <= t). Off by one either way is a real bug.
Mask causal_mask(std::size_t T);

/// Exercise 6.2 — causal_padding_mask
/// A sequence of T positions whose last T − valid are padding. Return the (T, T) mask that keeps (t, i)
/// when i ≤ t (causal) and key i is a real token (i < valid).
/// Hint: two conditions joined by "and"; a padded key is blocked for every query.
Mask causal_padding_mask(std::size_t T, std::size_t valid);

/// Exercise 6.3 — masked_softmax_row
/// Softmax of scores (n,) over the kept positions only: blocked positions get exactly 0 and the kept
/// ones renormalise. With scores (0, ln 2, ln 3) and keep (true, true, false): (1/3, 2/3, 0).
/// If no position is kept, throw attn::Error (this library's policy: never NaN, never a made-up row);
/// also throw when keep.size() differs from scores.size().
/// Hint: take the max over kept scores only, exponentiate the kept ones, divide by their sum.
Vec masked_softmax_row(const Vec& scores, const std::vector<bool>& keep);

}  // namespace ex
