// Your answers to the exercises of Section 9.1. Each body is a stub that throws; replace it.
#include "01_averaging/averaging.hpp"

#include <limits>

#include "core/error.hpp"

namespace ex {

Mat prefix_average(const Mat& x) {
    (void)x;
    attn::not_implemented("1.1", "prefix_average", "return the mean of rows 0..t of x for every t");
}

Mat averaging_matrix(std::size_t T) {
    (void)T;
    attn::not_implemented("1.2", "averaging_matrix", "return the lower-triangular row-normalised (T, T) matrix");
}

Mat causal_scores(std::size_t T) {
    (void)T;
    attn::not_implemented("1.3", "causal_scores", "return zeros on and below the diagonal, -inf above");
}

}  // namespace ex
