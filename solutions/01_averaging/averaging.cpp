// Reference answers for Section 9.1's exercises (see exercises/01_averaging/averaging.hpp).
#include "01_averaging/averaging.hpp"

#include <limits>

namespace ex {

Mat prefix_average(const Mat& x) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    Mat y = xt::zeros<float>({T, d});  // (T, d)
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t j = 0; j < d; ++j) {
            float sum = 0.0f;
            for (std::size_t i = 0; i <= t; ++i) sum += x(i, j);
            y(t, j) = sum / static_cast<float>(t + 1);
        }
    }
    return y;
}

Mat averaging_matrix(std::size_t T) {
    Mat A = xt::zeros<float>({T, T});  // (T, T)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i <= t; ++i) A(t, i) = 1.0f / static_cast<float>(t + 1);
    return A;
}

Mat causal_scores(std::size_t T) {
    Mat s = xt::zeros<float>({T, T});  // (T, T)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = t + 1; i < T; ++i) s(t, i) = -std::numeric_limits<float>::infinity();
    return s;
}

}  // namespace ex
