// Plain-loop specifications: the oracle every fast or learner-written function is compared against
// (in the style of Tensor-Puzzles). Written for clarity, in double precision, with no library calls.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace spec {

using attn::Mat;
using attn::Vec;

inline Mat matmul(const Mat& a, const Mat& b) {  // (n, k) @ (k, m)
    Mat c = xt::zeros<float>({a.shape(0), b.shape(1)});
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < b.shape(1); ++j) {
            double s = 0;
            for (std::size_t p = 0; p < a.shape(1); ++p) s += static_cast<double>(a(i, p)) * b(p, j);
            c(i, j) = static_cast<float>(s);
        }
    return c;
}

inline Mat transpose(const Mat& a) {
    Mat t = Mat::from_shape({a.shape(1), a.shape(0)});
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < a.shape(1); ++j) t(j, i) = a(i, j);
    return t;
}

// Softmax of one row; entries with keep[j] == false (or −∞) get weight 0.
inline Vec softmax(const Vec& s, const std::vector<bool>& keep = {}) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < s.size(); ++j)
        if (keep.empty() || keep[j]) m = std::max(m, static_cast<double>(s(j)));
    double sum = 0;
    std::vector<double> e(s.size(), 0.0);
    for (std::size_t j = 0; j < s.size(); ++j) {
        if ((keep.empty() || keep[j]) && std::isfinite(static_cast<double>(s(j)))) e[j] = std::exp(s(j) - m);
        sum += e[j];
    }
    Vec p = Vec::from_shape({s.size()});
    for (std::size_t j = 0; j < s.size(); ++j) p(j) = static_cast<float>(e[j] / sum);
    return p;
}

inline Mat softmax_rows(const Mat& s) {
    Mat p = Mat::from_shape(s.shape());
    for (std::size_t i = 0; i < s.shape(0); ++i) {
        Vec row = xt::row(s, static_cast<std::ptrdiff_t>(i));
        xt::row(p, static_cast<std::ptrdiff_t>(i)) = softmax(row);
    }
    return p;
}

// Definition 9.1, one query at a time.  q (T_q, d_k), k (T_k, d_k), v (T_k, d_v) → (T_q, d_v); `bias` (T_q, T_k), if
// given, added to each scaled score (ALiBi's)
inline Mat attention(const Mat& q, const Mat& k, const Mat& v, bool causal = false, const Mat* bias = nullptr) {
    const std::size_t Tq = q.shape(0), Tk = k.shape(0), dk = q.shape(1), dv = v.shape(1);
    Mat out = xt::zeros<float>({Tq, dv});
    for (std::size_t t = 0; t < Tq; ++t) {
        Vec s = Vec::from_shape({Tk});
        std::vector<bool> keep(Tk, true);
        for (std::size_t j = 0; j < Tk; ++j) {
            double dot = 0;
            for (std::size_t c = 0; c < dk; ++c) dot += static_cast<double>(q(t, c)) * k(j, c);
            s(j) = static_cast<float>(dot / std::sqrt(static_cast<double>(dk)) + (bias ? (*bias)(t, j) : 0.0));
            keep[j] = !causal || j <= t;
        }
        const Vec w = softmax(s, keep);
        for (std::size_t j = 0; j < Tk; ++j)
            for (std::size_t c = 0; c < dv; ++c) out(t, c) += w(j) * v(j, c);
    }
    return out;
}

inline Mat prefix_mean(const Mat& x) {
    Mat y = xt::zeros<float>(x.shape());
    for (std::size_t t = 0; t < x.shape(0); ++t)
        for (std::size_t j = 0; j < x.shape(1); ++j) {
            double s = 0;
            for (std::size_t i = 0; i <= t; ++i) s += x(i, j);
            y(t, j) = static_cast<float>(s / static_cast<double>(t + 1));
        }
    return y;
}

// The softmax Jacobian by central differences: J[i][j] ≈ (p_i(s + h e_j) − p_i(s − h e_j)) / 2h.  (n, n)
inline Mat softmax_jacobian_fd(const Vec& s, double h = 1e-3) {
    const std::size_t n = s.size();
    Mat J = Mat::from_shape({n, n});
    for (std::size_t j = 0; j < n; ++j) {
        Vec sp = s, sm = s;
        sp(j) += static_cast<float>(h);
        sm(j) -= static_cast<float>(h);
        const Vec pp = softmax(sp), pm = softmax(sm);
        for (std::size_t i = 0; i < n; ++i) J(i, j) = static_cast<float>((pp(i) - pm(i)) / (2 * h));
    }
    return J;
}

inline double entropy(const Vec& w) {
    double h = 0;
    for (float x : w)
        if (x > 0) h -= x * std::log(static_cast<double>(x));
    return h;
}

// The exact GELU, y = ½ x (1 + erf(x/√2)), and its backward dx = dy (Φ(x) + x φ(x)), elementwise in fp32
// over libm's erf and exp: what the vectorised fast::gelu_forward / gelu_backward and the GPU's kernels (erff)
// are held to, so in their precision rather than in double.
inline Mat gelu(const Mat& x) {
    const float inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
    Mat y = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float v = x.data()[i];
        y.data()[i] = 0.5f * v * (1.0f + std::erf(v * inv_sqrt2));
    }
    return y;
}

inline Mat gelu_backward(const Mat& x, const Mat& dy) {
    const float inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
    const float inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    Mat dx = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float v = x.data()[i];
        const float cdf = 0.5f * (1.0f + std::erf(v * inv_sqrt2));
        const float pdf = inv_sqrt_2pi * std::exp(-0.5f * v * v);
        dx.data()[i] = dy.data()[i] * (cdf + v * pdf);
    }
    return dx;
}

// Whether two tensors (or float vectors) hold the same floats bit for bit, their shapes (sizes) too: memcmp, so
// -0 and +0 differ and a NaN equals itself. memcmp takes no null pointer even for 0 bytes, and an empty tensor's
// data() may be one: empty ones compare by shape alone.
template <class A>
bool same_bits(const A& a, const A& b) {
    if constexpr (requires { a.shape(); }) {
        if (a.shape() != b.shape()) return false;
    } else if (a.size() != b.size()) {
        return false;
    }
    return a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(*a.data())) == 0;
}

// Random shapes for the "on random shapes" checks: `count` sizes in [lo, hi], fixed by the seed.
inline std::vector<std::size_t> random_sizes(attn::Rng& rng, int count, std::size_t lo, std::size_t hi) {
    std::vector<std::size_t> sizes;
    for (int i = 0; i < count; ++i) sizes.push_back(lo + rng.below(hi - lo + 1));
    return sizes;
}

}  // namespace spec
