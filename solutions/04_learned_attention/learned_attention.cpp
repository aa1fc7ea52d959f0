// Reference answers for Sections 9.1 and 9.3's exercises (see exercises/04_learned_attention/).
#include "04_learned_attention/learned_attention.hpp"

#include <cmath>

namespace ex {

namespace {
Mat product(const Mat& a, const Mat& b, bool transpose_b) {  // a (n, k) @ b (k, m), or @ bᵀ for b (m, k)
    const std::size_t n = a.shape(0), k = a.shape(1), m = transpose_b ? b.shape(0) : b.shape(1);
    Mat c = xt::zeros<float>({n, m});
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j)
            for (std::size_t p = 0; p < k; ++p) c(i, j) += a(i, p) * (transpose_b ? b(j, p) : b(p, j));
    return c;
}
}  // namespace

Mat qk_scores(const Mat& x, const Mat& W_q, const Mat& W_k) {
    const Mat q = product(x, W_q, false), k = product(x, W_k, false);  // (T, d_k) each
    Mat s = product(q, k, true);                                       // (T, T)
    s /= std::sqrt(static_cast<float>(W_q.shape(1)));
    return s;
}

LinearGrads linear_backward(const Mat& x, const Mat& W, const Mat& dy) {
    LinearGrads g;
    g.dx = product(dy, W, true);                      // (N, out) @ (in, out)ᵀ → (N, in)
    g.dW = product(Mat(xt::transpose(x)), dy, false);  // (in, N) @ (N, out) → (in, out)
    g.db = xt::zeros<float>({std::size_t{1}, dy.shape(1)});
    for (std::size_t i = 0; i < dy.shape(0); ++i)
        for (std::size_t j = 0; j < dy.shape(1); ++j) g.db(0, j) += dy(i, j);
    return g;
}

Vec softmax_backward(const Vec& w, const Vec& dw) {
    float dot = 0.0f;
    for (std::size_t i = 0; i < w.size(); ++i) dot += dw(i) * w(i);
    Vec ds = Vec::from_shape(w.shape());  // (n,)
    for (std::size_t j = 0; j < w.size(); ++j) ds(j) = w(j) * (dw(j) - dot);
    return ds;
}

}  // namespace ex
