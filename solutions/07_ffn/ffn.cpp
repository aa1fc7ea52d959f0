// Reference answers for Section 9.5's FFN exercises (see exercises/07_ffn/ffn.hpp).
#include "07_ffn/ffn.hpp"

#include <cmath>
#include <numbers>

namespace ex {

namespace {
Mat affine(const Mat& x, const Mat& W, const Mat& b) {  // x (N, in) @ W (in, out) + b (1, out)
    Mat y = Mat::from_shape({x.shape(0), W.shape(1)});
    for (std::size_t i = 0; i < x.shape(0); ++i)
        for (std::size_t j = 0; j < W.shape(1); ++j) {
            float s = b(0, j);
            for (std::size_t p = 0; p < x.shape(1); ++p) s += x(i, p) * W(p, j);
            y(i, j) = s;
        }
    return y;
}
}  // namespace

Mat gelu(const Mat& x) {
    Mat y = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x.data()[i];
        y.data()[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)));
    }
    return y;
}

Mat gelu_tanh(const Mat& x) {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    Mat y = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x.data()[i];
        y.data()[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))));
    }
    return y;
}

Mat ffn_forward(const Mat& x, const Mat& W_1, const Mat& b_1, const Mat& W_2, const Mat& b_2) {
    return affine(gelu(affine(x, W_1, b_1)), W_2, b_2);  // (N, d_ff) in between
}

}  // namespace ex
