// Reference answers for Section 9.2's exercises (see exercises/03_scaling/scaling.hpp).
#include "03_scaling/scaling.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace ex {

double score_variance(const Mat& q, const Mat& k) {
    if (q.shape() != k.shape() || q.shape(0) == 0)
        throw attn::Error("score_variance: q " + attn::shape_str(q) + " and k " + attn::shape_str(k) + " must be the same (n, d) with n > 0");
    const std::size_t n = q.shape(0), d = q.shape(1);
    std::vector<double> s(n);  // (n,) the dot products
    double mean = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += static_cast<double>(q(i, c)) * k(i, c);
        s[i] = dot;
        mean += dot;
    }
    mean /= static_cast<double>(n);
    double var = 0;
    for (double x : s) var += (x - mean) * (x - mean);
    return var / static_cast<double>(n);
}

double entropy(const Vec& w) {
    double h = 0;
    for (std::size_t i = 0; i < w.size(); ++i)
        if (!(w(i) >= 0.0f && w(i) <= 1.0f))  // NaN fails both
            throw attn::Error("entropy: w(" + std::to_string(i) + ") = " + std::to_string(w(i)) + " of " + attn::shape_str(w) + " is not in [0, 1]");
    for (float x : w)
        if (x > 0) h -= static_cast<double>(x) * std::log(static_cast<double>(x));
    return h;
}

Mat softmax_jacobian(const Vec& p) {
    const std::size_t n = p.size();
    Mat J = Mat::from_shape({n, n});  // (n, n)
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) J(i, j) = (i == j ? p(i) : 0.0f) - p(i) * p(j);
    return J;
}

}  // namespace ex
