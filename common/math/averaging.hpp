// Section 9.1's averaging matrix, which the uniform mixer of the ladder's models applies, and the row
// gather that permutes a sequence or looks up embeddings. The section's experiments with them (three ways
// to average, the shuffle test) are chapters/01_averaging's.
#pragma once

#include <vector>

#include "core/tensor.hpp"

namespace attn {

Mat averaging_matrix(std::size_t T);  // (T, T): lower-triangular, row t holds 1/(t+1) — A @ x averages

// Row i of the result is x[rows[i]]: a permutation of x, or an embedding lookup of token ids.
Mat gather_rows(const Mat& x, const std::vector<std::size_t>& rows);

}  // namespace attn
