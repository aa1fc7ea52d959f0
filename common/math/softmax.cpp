#include "math/softmax.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace attn {

namespace {
// One row: out = softmax(s) over the positions where keep is true (keep == nullptr: all positions,
// but −∞ scores count as blocked).
void softmax_row(const float* s, const bool* keep, float* out, std::size_t n, const char* where, std::size_t row,
                 const std::string& shape) {
    float m = -std::numeric_limits<float>::infinity();
    bool any = false;
    for (std::size_t j = 0; j < n; ++j) {
        const bool allowed = keep ? keep[j] : true;
        if (!allowed) continue;
        if (std::isnan(s[j]) || s[j] == std::numeric_limits<float>::infinity()) {
            throw Error(std::string(where) + ": score at (" + std::to_string(row) + ", " + std::to_string(j) +
                        ") of " + shape + " is " + (std::isnan(s[j]) ? "NaN" : "+inf") + "; scores must be finite");
        }
        if (s[j] == -std::numeric_limits<float>::infinity()) continue;  // blocked by −∞
        any = true;
        m = std::max(m, s[j]);
    }
    if (!any) {
        throw Error(std::string(where) + ": row " + std::to_string(row) + " of " + shape +
                    " is fully masked (policy: error)");
    }
    float sum = 0.0f;
    for (std::size_t j = 0; j < n; ++j) {
        const bool allowed = (keep ? keep[j] : true) && s[j] != -std::numeric_limits<float>::infinity();
        out[j] = allowed ? std::exp(s[j] - m) : 0.0f;
        sum += out[j];
    }
    const float inv = 1.0f / sum;
    for (std::size_t j = 0; j < n; ++j) out[j] *= inv;
}
}  // namespace

Vec softmax(const Vec& s) {
    require(s.size() > 0, "softmax", "empty input " + shape_str(s));
    Vec p = Vec::from_shape(s.shape());
    softmax_row(s.data(), nullptr, p.data(), s.size(), "softmax", 0, shape_str(s));
    return p;
}

Mat softmax_rows(const Mat& scores) {
    require(scores.shape(1) > 0, "softmax_rows", "no columns in " + shape_str(scores));
    Mat p = Mat::from_shape(scores.shape());
    const std::size_t n = scores.shape(1);
    const std::string shape = shape_str(scores);
    for (std::size_t i = 0; i < scores.shape(0); ++i) {
        softmax_row(scores.data() + i * n, nullptr, p.data() + i * n, n, "softmax_rows", i, shape);
    }
    return p;
}

Mat masked_softmax(const Mat& scores, const Mask& keep) {
    require(scores.shape() == keep.shape(), "masked_softmax",
            "mask " + shape_str(keep) + " does not match scores " + shape_str(scores));
    Mat p = Mat::from_shape(scores.shape());
    const std::size_t n = scores.shape(1);
    const std::string shape = shape_str(scores);
    for (std::size_t i = 0; i < scores.shape(0); ++i) {
        softmax_row(scores.data() + i * n, keep.data() + i * n, p.data() + i * n, n, "masked_softmax", i, shape);
    }
    return p;
}

Mask causal_mask(std::size_t T) {
    Mask keep = Mask::from_shape({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) keep(t, i) = i <= t;
    return keep;
}

Mat masked_fill(const Mat& scores, const Mask& keep, float fill) {
    require(scores.shape() == keep.shape(), "masked_fill",
            "mask " + shape_str(keep) + " does not match scores " + shape_str(scores));
    Mat out = scores;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (!keep.data()[i]) out.data()[i] = fill;
    }
    return out;
}

Mat softmax_jacobian(const Vec& p) {
    const std::size_t n = p.size();
    Mat J = Mat::from_shape({n, n});
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) J(i, j) = p(i) * ((i == j ? 1.0f : 0.0f) - p(j));
    return J;
}

void softmax_rows_backward(const float* w, const float* dw, float* ds, std::size_t rows, std::size_t cols) {
    for (std::size_t i = 0; i < rows; ++i) {
        const float* wi = w + i * cols;
        const float* dwi = dw + i * cols;
        float dot = 0.0f;
        for (std::size_t j = 0; j < cols; ++j) dot += dwi[j] * wi[j];
        for (std::size_t j = 0; j < cols; ++j) ds[i * cols + j] = wi[j] * (dwi[j] - dot);
    }
}

}  // namespace attn
