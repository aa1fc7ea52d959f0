// erf and exp for float, written so that a compiler vectorises a loop that calls them: no branches, no
// table look-ups, no libm call (std::erf and std::exp are opaque calls that a loop cannot vectorise), only
// +, ×, ÷, min, max and integer bit arithmetic. The exact GELU (layers.hpp) spends most of its time here.
//
//   erf_rational(x): Eigen's and XLA's single-precision erf, x·P(x²)/Q(x²) with x clamped to [−4, 4]
//                    (beyond it erf is ±1 to float precision); max |error| against std::erf: see
//                    tests/common/test_vmath.cpp (a dense sweep over [−6, 6]): 4.7e-7, near x = 3.27.
//   exp_poly(x):     Cephes' expf: e^x = 2^n · e^r with n = round(x / ln 2) and |r| ≤ ln 2 / 2, e^r by a
//                    degree-6 polynomial, 2^n written straight into the float's exponent bits. Inputs below
//                    −87 give a tiny positive number (not 0 and no denormals), above 88 they are clamped.
//   row_max(x, n), row_sum(x, n): a reduction in 16 interleaved lanes, combined in a fixed order at the end. A
//                    single running sum is a chain of dependent adds that cannot vectorise (reordering a float
//                    sum changes its rounding, which the compiler may not do); 16 independent lanes can, and
//                    the result is the same on every machine and every vector width.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

// ATTN_CLONES compiles a loop three times, for AVX-512 (16 floats a step), AVX2 (8) and baseline x86-64
// (SSE2, 4), and the loader picks the one the CPU runs (GCC's target_clones). Every clone does the same
// IEEE operations in the same order and none fuses a·b + c (the library is built with -ffp-contract=off:
// GCC's AVX-512 target brings FMA with it), so all give the same bits. Off x86-64, with
// Clang, or under a sanitizer (whose runtime is not up yet when the loader resolves the clones: the program
// would crash before main), one version for the compiler's target.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define ATTN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTN_CLONES
#endif

namespace attn::fast {

inline float erf_rational(float x) {
    x = std::min(std::max(x, -4.0f), 4.0f);
    const float x2 = x * x;
    // numerator: x · (α₁ + α₃x² + … + α₁₃x¹²), by Horner from the highest power
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 + -2.10102402082508e-06f;
    p = p * x2 + -5.69250639462346e-05f;
    p = p * x2 + -7.34990630326855e-04f;
    p = p * x2 + -2.95459980854025e-03f;
    p = p * x2 + -1.60960333262415e-02f;
    // denominator: β₀ + β₂x² + … + β₈x⁸
    float q = -1.45660718464996e-05f;
    q = q * x2 + -2.13374055278905e-04f;
    q = q * x2 + -1.68282697438203e-03f;
    q = q * x2 + -7.37332916720468e-03f;
    q = q * x2 + -1.42647390514189e-02f;
    return x * p / q;
}

inline float exp_poly(float x) {
    x = std::min(std::max(x, -87.0f), 88.0f);
    // n = round(x / ln 2) without a rounding call: adding 1.5·2²³ pushes the fraction out of the mantissa
    // (round to nearest), and the integer n is left in the low mantissa bits.
    constexpr float shift = 12582912.0f;  // 1.5 · 2²³
    const float t = x * 1.44269504088896341f + shift;
    const float n = t - shift;
    const std::int32_t ni = std::bit_cast<std::int32_t>(t) - std::bit_cast<std::int32_t>(shift);
    // r = x − n ln 2, with ln 2 split in two so that n·ln2_hi is exact
    const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * std::bit_cast<float>((ni + 127) << 23);  // · 2ⁿ
}

inline constexpr std::size_t kLanes = 16;

inline float row_max(const float* x, std::size_t n) {  // n ≥ 1
    float lane[kLanes];
    for (std::size_t k = 0; k < kLanes; ++k) lane[k] = x[0];
    std::size_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
        // std::max spelled out, and the 16 lanes kept a loop: GCC's -O3 would unroll them into 16 scalar
        // maxima (and std::max's reference alone keeps them scalar) instead of two vector ones
#pragma GCC unroll 1
        for (std::size_t k = 0; k < kLanes; ++k) {
            const float a = lane[k], b = x[j + k];
            lane[k] = a < b ? b : a;
        }
    }
    for (; j < n; ++j) lane[0] = std::max(lane[0], x[j]);
    float m = lane[0];
    for (std::size_t k = 1; k < kLanes; ++k) m = std::max(m, lane[k]);
    return m;
}

inline float row_sum(const float* x, std::size_t n) {
    float lane[kLanes] = {};
    std::size_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
        for (std::size_t k = 0; k < kLanes; ++k) lane[k] += x[j + k];
    for (; j < n; ++j) lane[0] += x[j];
    float sum = 0.0f;
    for (std::size_t k = 0; k < kLanes; ++k) sum += lane[k];
    return sum;
}

}  // namespace attn::fast
