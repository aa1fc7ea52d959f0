#include "math/positions.hpp"

#include <cmath>

#include "core/error.hpp"

namespace attn {

namespace {
double omega(std::size_t pair, std::size_t d, double base) {
    return std::pow(base, -2.0 * static_cast<double>(pair) / static_cast<double>(d));
}
void require_even(std::size_t d, const char* where) {
    require(d > 0 && d % 2 == 0, where, "width d = " + std::to_string(d) + " must be even (positions come in sin/cos pairs)");
}
}  // namespace

Mat sinusoidal_table(std::size_t T, std::size_t d, double base) {
    require_even(d, "sinusoidal_table");
    Mat p = Mat::from_shape({T, d});
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t t = 0; t < d / 2; ++t) {
            const double angle = static_cast<double>(i) * omega(t, d, base);
            p(i, 2 * t) = static_cast<float>(std::sin(angle));
            p(i, 2 * t + 1) = static_cast<float>(std::cos(angle));
        }
    return p;
}

Mat sinusoidal_shift(std::size_t k, std::size_t d, double base) {
    require_even(d, "sinusoidal_shift");
    Mat M = xt::zeros<float>({d, d});
    for (std::size_t t = 0; t < d / 2; ++t) {
        const double a = static_cast<double>(k) * omega(t, d, base);
        // sin(x + a) = sin x cos a + cos x sin a;  cos(x + a) = cos x cos a − sin x sin a
        M(2 * t, 2 * t) = static_cast<float>(std::cos(a));
        M(2 * t, 2 * t + 1) = static_cast<float>(std::sin(a));
        M(2 * t + 1, 2 * t) = static_cast<float>(-std::sin(a));
        M(2 * t + 1, 2 * t + 1) = static_cast<float>(std::cos(a));
    }
    return M;
}

Mat rope(const Mat& x, std::size_t first_position, double base) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    require_even(d, "rope");
    Mat y = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t t = 0; t < d / 2; ++t) {
            const double a = static_cast<double>(first_position + i) * omega(t, d, base);
            const double c = std::cos(a), s = std::sin(a), x0 = x(i, 2 * t), x1 = x(i, 2 * t + 1);
            y(i, 2 * t) = static_cast<float>(x0 * c - x1 * s);
            y(i, 2 * t + 1) = static_cast<float>(x0 * s + x1 * c);
        }
    return y;
}

std::vector<double> alibi_slopes(std::size_t n_heads) {
    require(n_heads > 0, "alibi_slopes", "n_heads must be positive");
    std::vector<double> m;
    for (std::size_t j = 1; j <= n_heads; ++j) m.push_back(std::pow(2.0, -8.0 * static_cast<double>(j) / static_cast<double>(n_heads)));
    return m;
}

Mat alibi_bias(std::size_t T, double slope) {
    Mat b = xt::zeros<float>({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i <= t; ++i) b(t, i) = static_cast<float>(-slope * static_cast<double>(t - i));
    return b;
}

Mat rope_angles(std::size_t T, std::size_t d_k) {
    Mat unit = xt::zeros<float>({T, d_k});  // rows of (1, 0) pairs: rope() leaves (cos t·ω_j, sin t·ω_j)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < d_k; j += 2) unit(t, j) = 1.0f;
    return rope(unit);
}

void rotate_pairs(Mat& x, const Mat& angles, std::size_t n_heads, float sign) {
    const std::size_t T = angles.shape(0), dk = angles.shape(1), width = x.shape(1);
    require(width == n_heads * dk && x.shape(0) % T == 0, "rotate_pairs",
            "x " + shape_str(x) + " is not (B·T, n_heads·d_k) for angles " + shape_str(angles));
    for (std::size_t n = 0; n < x.shape(0); ++n) {
        float* row = x.data() + n * width;
        const float* a = angles.data() + (n % T) * dk;
        for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t j = 0; j < dk; j += 2) {
                const float c = a[j], s = sign * a[j + 1], x0 = row[h * dk + j], x1 = row[h * dk + j + 1];
                row[h * dk + j] = x0 * c - x1 * s;
                row[h * dk + j + 1] = x0 * s + x1 * c;
            }
    }
}

}  // namespace attn
