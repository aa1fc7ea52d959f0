#include "core/rng.hpp"

#include <cmath>
#include <numbers>
#include <numeric>

#include "core/error.hpp"

namespace attn {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = seed ^ (0xd1342543de82ef95ULL * (stream + 1));
    for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Rng::next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t n) {
    require(n > 0, "Rng::below", "n must be positive");
    // Rejection sampling: draw from the largest multiple of n below 2^64.
    const std::uint64_t limit = (~std::uint64_t{0} / n) * n;
    std::uint64_t r;
    do r = next_u64(); while (r >= limit);
    return r % n;
}

double Rng::normal() {
    if (has_spare_) {
        has_spare_ = false;
        return spare_;
    }
    // Box–Muller: u1 in (0, 1] so the log is finite.
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
}

void Rng::fill_normal(float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(normal());
}

Vec Rng::normal_vec(std::size_t n) {
    Vec v = Vec::from_shape({n});
    fill_normal(v.data(), v.size());
    return v;
}

Mat Rng::normal_mat(std::size_t rows, std::size_t cols) {
    Mat m = Mat::from_shape({rows, cols});
    fill_normal(m.data(), m.size());
    return m;
}

std::vector<std::size_t> Rng::permutation(std::size_t n) {
    std::vector<std::size_t> p(n);
    std::iota(p.begin(), p.end(), std::size_t{0});
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[below(i)]);
    return p;
}

}  // namespace attn
