// Exercises for Section 9.5: LayerNorm, and where the block puts it (pre-norm vs post-norm). Write the
// bodies in normalization.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec08]"`.
#pragma once

#include <functional>

#include "attn/block.hpp"  // attn::Norm
#include "attn/tensor.hpp"

namespace ex {

using attn::Mat;

/// Exercise 8.1 — layernorm
/// Each row of x (N, d) on its own: y = gain ⊙ (x − mean) / sqrt(var + eps) + bias, where mean and
/// var are the row's mean and *biased* variance (divide by d, not d − 1). gain and bias are (1, d).
/// A row of a constant c becomes `bias` (its variance is 0; eps keeps the division finite).
/// Hint: accumulate the mean and variance in double; xhat = (x − mean) · rstd with rstd = 1/sqrt(var + eps).
Mat layernorm(const Mat& x, const Mat& gain, const Mat& bias, float eps = 1e-5f);

/// Exercise 8.2 — layernorm_backward
/// The gradient of the loss with respect to x, given dy = ∂L/∂y (N, d), for gain as above (bias does
/// not enter). With xhat = (x − mean) · rstd and g = dy ⊙ gain, per row:
///     dx = rstd · (g − mean(g) − xhat · mean(g ⊙ xhat))
/// Hint: recompute mean, rstd and xhat from x; the two means are over the row's d entries.
Mat layernorm_backward(const Mat& x, const Mat& gain, const Mat& dy, float eps = 1e-5f);

/// Exercise 8.3 — residual_sublayer
/// One sub-layer f (attention or FFN, (N, d) → (N, d)) with its residual connection and a LayerNorm
/// `norm` ((N, d) → (N, d)), placed as `placement` (Norm::pre or Norm::post) asks:
///     pre-norm  (GPT-2, and almost every model since 2019):  x + f(norm(x))
///     post-norm (the 2017 paper):                            norm(x + f(x))
/// Hint: pre-norm never normalises the residual path itself; post-norm normalises the sum.
Mat residual_sublayer(const Mat& x, const std::function<Mat(const Mat&)>& f,
                      const std::function<Mat(const Mat&)>& norm, attn::Norm placement);

}  // namespace ex
