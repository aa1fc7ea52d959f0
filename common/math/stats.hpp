// The small statistics the chapter reads off attention rows and random scores.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

double mean_of(const float* x, std::size_t n);
double variance_of(const float* x, std::size_t n);  // population variance, in double
inline double mean_of(const Vec& x) { return mean_of(x.data(), x.size()); }
inline double variance_of(const Vec& x) { return variance_of(x.data(), x.size()); }

// For one probability row w (n,):
double entropy(const float* w, std::size_t n);          // −Σ w ln w in nats, with 0 ln 0 = 0
double jacobian_trace(const float* w, std::size_t n);   // Σ w_i (1 − w_i) = 1 − Σ w_i², the softmax Jacobian's trace
bool is_frozen(const float* w, std::size_t n, double threshold);  // every w_i (1 − w_i) < threshold
inline double entropy(const Vec& w) { return entropy(w.data(), w.size()); }

// "Effective tokens": exp(entropy), how many positions a row really averages over (1 … n).
inline double effective_tokens(double entropy_nats) { return std::exp(entropy_nats); }

// One figure measured at many seeds: its mean, its sample standard deviation (n − 1), and its range.
struct Spread {
    double mean = 0, std = 0, min = 0, max = 0;
    int n = 0;
};
Spread spread_of(const std::vector<double>& values);  // throws attn::Error for no values

// max |a − b| over entries; equal entries (equal infinities too) differ by 0. NaN when either holds a NaN,
// so that `max_abs_diff(x, ref) < tol` fails; +inf where one is infinite and the other is not. Throws attn::Error when the shapes differ.
double max_abs_diff(const Mat& a, const Mat& b);
double max_abs_diff(const Vec& a, const Vec& b);

}  // namespace attn

