#include "attn/averaging.hpp"

#include <limits>

#include "attn/error.hpp"
#include "attn/matmul.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"

namespace attn {

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

Mat averaging_matrix(std::size_t T) {
    Mat A = xt::zeros<float>({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i <= t; ++i) A(t, i) = 1.0f / static_cast<float>(t + 1);
    return A;
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
    r.matmul = matmul(averaging_matrix(T), x);                     // the same thing
    r.softmax = matmul(softmax_rows(causal_zero_scores(T)), x);    // and the same thing again
    r.loop_vs_matmul = max_abs_diff(r.loop, r.matmul);
    r.loop_vs_softmax = max_abs_diff(r.loop, r.softmax);
    return r;
}

Mat gather_rows(const Mat& x, const std::vector<std::size_t>& rows) {
    Mat y = Mat::from_shape({rows.size(), x.shape(1)});
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] >= x.shape(0))
            throw Error("gather_rows: row index " + std::to_string(rows[i]) + " out of range for x " + shape_str(x));
        xt::row(y, static_cast<std::ptrdiff_t>(i)) = xt::row(x, static_cast<std::ptrdiff_t>(rows[i]));
    }
    return y;
}

Vec context_average(const Mat& x) {
    const std::size_t T = x.shape(0);
    require(T > 0, "context_average", "x " + shape_str(x) + " has no rows");
    const Vec last = xt::row(averaging_matrix(T), static_cast<std::ptrdiff_t>(T - 1));  // (T,)
    return vecmat(last, x);                                                             // (d,)
}

ShuffleTest shuffle_test(const Mat& x, const std::vector<std::size_t>& perm) {
    require(perm.size() == x.shape(0), "shuffle_test",
            "permutation of " + std::to_string(perm.size()) + " rows for x " + shape_str(x));
    ShuffleTest r;
    r.summary = context_average(x);
    r.shuffled_summary = context_average(gather_rows(x, perm));
    r.max_abs_diff = max_abs_diff(r.summary, r.shuffled_summary);
    return r;
}

}  // namespace attn
