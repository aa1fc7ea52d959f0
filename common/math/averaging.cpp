#include "math/averaging.hpp"

#include "core/error.hpp"

namespace attn {

Mat averaging_matrix(std::size_t T) {
    Mat A = xt::zeros<float>({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i <= t; ++i) A(t, i) = 1.0f / static_cast<float>(t + 1);
    return A;
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

}  // namespace attn
