// Reference answers to the exercises of Section 9.5 (LayerNorm, pre-norm vs post-norm).
#include "08_normalization/normalization.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace ex {

namespace {
// mean and rstd = 1/sqrt(var + eps) of row r of x (N, d), in double
std::pair<double, double> row_stats(const Mat& x, std::size_t r, float eps) {
    const std::size_t d = x.shape(1);
    double mean = 0, var = 0;
    for (std::size_t j = 0; j < d; ++j) mean += x(r, j);
    mean /= static_cast<double>(d);
    for (std::size_t j = 0; j < d; ++j) var += (x(r, j) - mean) * (x(r, j) - mean);
    var /= static_cast<double>(d);
    return {mean, 1.0 / std::sqrt(var + eps)};
}

void require_eps(float eps, const char* where) {
    attn::require(std::isfinite(eps) && eps > 0, where, "eps = " + std::to_string(eps) + " must be a finite number above 0");
}

void require_row_vector(const Mat& v, const Mat& x, const char* where, const char* name) {
    attn::require(v.shape(0) == 1 && v.shape(1) == x.shape(1), where,
                  std::string(name) + " is " + attn::shape_str(v) + ", expected (1, " + std::to_string(x.shape(1)) + ")");
}
}  // namespace

Mat layernorm(const Mat& x, const Mat& gain, const Mat& bias, float eps) {
    require_row_vector(gain, x, "layernorm", "gain");
    require_row_vector(bias, x, "layernorm", "bias");
    require_eps(eps, "layernorm");
    Mat y = Mat::from_shape(x.shape());  // (N, d)
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        const auto [mean, rstd] = row_stats(x, r, eps);
        for (std::size_t j = 0; j < x.shape(1); ++j)
            y(r, j) = static_cast<float>(gain(0, j) * (x(r, j) - mean) * rstd + bias(0, j));
    }
    return y;
}

Mat layernorm_backward(const Mat& x, const Mat& gain, const Mat& dy, float eps) {
    require_row_vector(gain, x, "layernorm_backward", "gain");
    attn::require(dy.shape() == x.shape(), "layernorm_backward", "dy is " + attn::shape_str(dy) + ", x is " + attn::shape_str(x));
    require_eps(eps, "layernorm_backward");
    const std::size_t d = x.shape(1);
    Mat dx = Mat::from_shape(x.shape());  // (N, d)
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        const auto [mean, rstd] = row_stats(x, r, eps);
        double mean_g = 0, mean_gx = 0;
        for (std::size_t j = 0; j < d; ++j) {
            const double g = dy(r, j) * gain(0, j), xhat = (x(r, j) - mean) * rstd;
            mean_g += g, mean_gx += g * xhat;
        }
        mean_g /= static_cast<double>(d), mean_gx /= static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j) {
            const double g = dy(r, j) * gain(0, j), xhat = (x(r, j) - mean) * rstd;
            dx(r, j) = static_cast<float>(rstd * (g - mean_g - xhat * mean_gx));
        }
    }
    return dx;
}

Mat residual_sublayer(const Mat& x, const std::function<Mat(const Mat&)>& f,
                      const std::function<Mat(const Mat&)>& norm, attn::Norm placement) {
    if (placement == attn::Norm::pre) return x + f(norm(x));  // the residual path x is never normalised
    if (placement == attn::Norm::none) return x + f(x);       // no LayerNorm: the residual sum alone
    return norm(x + f(x));                                     // post-norm: the LayerNorm sits on the residual path
}

}  // namespace ex
