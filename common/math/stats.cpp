#include "math/stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace attn {

double mean_of(const float* x, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i];
    return n ? s / static_cast<double>(n) : 0.0;
}

double variance_of(const float* x, std::size_t n) {
    const double m = mean_of(x, n);
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += (x[i] - m) * (x[i] - m);
    return n ? s / static_cast<double>(n) : 0.0;
}

double entropy(const float* w, std::size_t n) {
    double h = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (w[i] > 0) h -= static_cast<double>(w[i]) * std::log(static_cast<double>(w[i]));
    }
    return h;
}

double jacobian_trace(const float* w, std::size_t n) {
    double t = 0;
    for (std::size_t i = 0; i < n; ++i) t += static_cast<double>(w[i]) * (1.0 - w[i]);
    return t;
}

bool is_frozen(const float* w, std::size_t n, double threshold) {
    for (std::size_t i = 0; i < n; ++i) {
        if (static_cast<double>(w[i]) * (1.0 - w[i]) >= threshold) return false;
    }
    return true;
}

// NaN is the largest difference of all: `std::max(m, NaN)` would keep m, and a NaN output (a kernel
// that skipped its poisoned entries, a backward that divided 0 by 0) would pass any `< tol`.
static double max_abs_diff_of(const float* a, const float* b, std::size_t n) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] == b[i]) continue;  // equal, infinities included (inf − inf would be NaN)
        const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
        if (!(d <= m)) m = d;  // NaN enters, and then nothing is larger than it
        if (std::isnan(m)) return m;
    }
    return m;
}

Spread spread_of(const std::vector<double>& values) {
    require(!values.empty(), "spread_of", "no values");
    Spread s;
    s.n = static_cast<int>(values.size());
    s.min = s.max = values.front();
    for (double v : values) s.mean += v, s.min = std::min(s.min, v), s.max = std::max(s.max, v);
    s.mean /= s.n;
    double ss = 0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.std = s.n > 1 ? std::sqrt(ss / (s.n - 1)) : 0.0;
    return s;
}

double max_abs_diff(const Mat& a, const Mat& b) {
    require(a.shape() == b.shape(), "max_abs_diff", "shapes differ: " + shape_str(a) + " vs " + shape_str(b));
    return max_abs_diff_of(a.data(), b.data(), a.size());
}

double max_abs_diff(const Vec& a, const Vec& b) {
    require(a.shape() == b.shape(), "max_abs_diff", "shapes differ: " + shape_str(a) + " vs " + shape_str(b));
    return max_abs_diff_of(a.data(), b.data(), a.size());
}

}  // namespace attn
