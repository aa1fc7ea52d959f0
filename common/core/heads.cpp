#include "core/heads.hpp"

#include <string>

#include "core/error.hpp"

namespace attn {

void check_heads(const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads) {
    require(n_heads > 0 && x.shape(1) % n_heads == 0, "split_heads",
            "d_model " + std::to_string(x.shape(1)) + " of x " + shape_str(x) + " is not divisible by n_heads = " +
                std::to_string(n_heads));
    require(x.shape(0) == B * T, "split_heads",
            "x " + shape_str(x) + " does not hold B·T = " + std::to_string(B) + "·" + std::to_string(T) + " rows");
}

Tensor3 split_heads(const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads) {
    check_heads(x, B, T, n_heads);
    const std::size_t dh = x.shape(1) / n_heads;
    Tensor3 out = Tensor3::from_shape({B * n_heads, T, dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < dh; ++j) out(b * n_heads + h, t, j) = x(b * T + t, h * dh + j);
    return out;
}

Mat merge_heads(const Tensor3& x, std::size_t B, std::size_t T, std::size_t n_heads) {
    require(x.shape(0) == B * n_heads && x.shape(1) == T, "merge_heads",
            "x " + shape_str(x) + " is not (B·n_heads, T, d_head) for B = " + std::to_string(B) + ", n_heads = " +
                std::to_string(n_heads) + ", T = " + std::to_string(T));
    const std::size_t dh = x.shape(2);
    Mat out = Mat::from_shape({B * T, n_heads * dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < dh; ++j) out(b * T + t, h * dh + j) = x(b * n_heads + h, t, j);
    return out;
}

}  // namespace attn
