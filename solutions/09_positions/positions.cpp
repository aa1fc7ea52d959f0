// Reference answers for Section 9.6's exercises (see exercises/09_positions/positions.hpp).
#include "09_positions/positions.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "report/table.hpp"

namespace ex {

Mat sinusoidal_table(std::size_t T, std::size_t d) {
    if (d % 2 != 0) throw attn::Error("sinusoidal_table: d = " + std::to_string(d) + " is odd: the columns come in (sine, cosine) pairs");
    Mat p = Mat::from_shape({T, d});  // (T, d)
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t t = 0; t < d / 2; ++t) {
            const double angle = static_cast<double>(i) / std::pow(10000.0, 2.0 * t / static_cast<double>(d));
            p(i, 2 * t) = static_cast<float>(std::sin(angle));
            p(i, 2 * t + 1) = static_cast<float>(std::cos(angle));
        }
    return p;
}

Mat rope_rotate(const Mat& x, std::size_t first_position) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    if (d % 2 != 0) throw attn::Error("rope_rotate: x is " + attn::shape_str(x) + ": an odd d, and RoPE rotates pairs of columns");
    Mat y = Mat::from_shape({T, d});  // (T, d)
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t t = 0; t < d / 2; ++t) {
            const double theta = static_cast<double>(first_position + i) * std::pow(10000.0, -2.0 * t / static_cast<double>(d));
            const double x0 = x(i, 2 * t), x1 = x(i, 2 * t + 1);
            y(i, 2 * t) = static_cast<float>(x0 * std::cos(theta) - x1 * std::sin(theta));
            y(i, 2 * t + 1) = static_cast<float>(x0 * std::sin(theta) + x1 * std::cos(theta));
        }
    return y;
}

Mat alibi_bias(std::size_t T, std::size_t n_heads, std::size_t head) {
    if (head < 1 || head > n_heads)
        throw attn::Error("alibi_bias: head " + std::to_string(head) + " is not one of the heads 1.." + std::to_string(n_heads));
    const double m = std::pow(2.0, -8.0 * static_cast<double>(head) / static_cast<double>(n_heads));
    Mat b = xt::zeros<float>({T, T});  // (T, T)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i <= t; ++i) b(t, i) = static_cast<float>(-m * static_cast<double>(t - i));
    return b;
}

}  // namespace ex
