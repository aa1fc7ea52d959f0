#include "chapters/01_averaging/three_ways.hpp"

#include <limits>

#include <xtensor-blas/xlinalg.hpp>

#include "core/error.hpp"
#include "math/averaging.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"

namespace attn::sec01 {

Mat prefix_mean_loop(const Mat& x) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    Mat out = xt::zeros<float>({T, d});
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t j = 0; j < d; ++j) {
            float sum = 0.0f;
            for (std::size_t i = 0; i <= t; ++i) sum += x(i, j);
            out(t, j) = sum / static_cast<float>(t + 1);
        }
    }
    return out;
}

Mat causal_zero_scores(std::size_t T) {
    const Mat zeros = xt::zeros<float>({T, T});
    return masked_fill(zeros, causal_mask(T), -std::numeric_limits<float>::infinity());
}

ThreeWays average_three_ways(const Mat& x) {
    require(x.shape(0) > 0, "average_three_ways", "x " + shape_str(x) + " has no rows");
    require_finite(x.data(), x.size(), "average_three_ways", shape_str(x));
    const std::size_t T = x.shape(0);
    ThreeWays r;
    r.loop = prefix_mean_loop(x);                                  // the obvious version
    r.matmul = xt::linalg::dot(averaging_matrix(T), x);                   // the same thing
    r.softmax = xt::linalg::dot(softmax_rows(causal_zero_scores(T)), x);  // and the same thing again
    r.loop_vs_matmul = max_abs_diff(r.loop, r.matmul);
    r.loop_vs_softmax = max_abs_diff(r.loop, r.softmax);
    return r;
}

}  // namespace attn::sec01
