// The 8-lane exp of attn/vec_exp.hpp, and the row sum that comes with it.
#include "attn/vec_exp.hpp"

#include <cstdint>
#include <cstring>

// The row loops are compiled twice, for AVX2 and for baseline x86-64, and the loader picks the one the
// CPU runs (GCC's target_clones). target("avx2") does not enable FMA, and baseline x86-64 has none, so
// no a·b + c is fused and both clones give the same bits. Off x86-64, under a sanitizer, or with Clang:
// one version for the compiler's target. (The vector types are GNU extensions, which GCC and Clang both
// have.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define ATTN_ROW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ATTN_ROW_CLONES
#endif

namespace attn {

namespace {

// 8 floats at a time with GCC's vector extensions: one AVX2 register, two SSE registers in the
// baseline clone. Every lane does the same IEEE operations in both clones.
using v8f = float __attribute__((vector_size(32)));
using v8i = std::int32_t __attribute__((vector_size(32)));
using v8u = std::uint32_t __attribute__((vector_size(32)));
constexpr std::size_t lanes = 8;
// Vectors travel by reference, never by value: a 32-byte vector argument is passed differently with
// and without AVX, and the baseline clone must not depend on that.

template <class To, class From>
inline void copy_bits(To& to, const From& from) {  // std::bit_cast, but without returning a vector by value
    static_assert(sizeof(To) == sizeof(From));
    std::memcpy(&to, &from, sizeof to);
}

// x ← exp(x) for x ≤ 0. F is float or v8f, U its unsigned bits, M its comparison result: one float and
// eight go through the same operations in the same order, so both give equal bits.
template <class F, class U, class M>
inline void exp_nonpositive_in_place(F& x, const F& zero) {
    const M tiny = x < zero - 86.5f;
    const F xc = tiny ? zero - 86.5f : x;
    const F magic = zero + 12582912.0f;              // 1.5 · 2²³: adding it rounds to an integer
    const F t = xc * 1.44269504088896341f + magic;  // n = round(x · log2 e), held in t's low bits
    const F n = t - magic;
    U t_bits, magic_bits, y_bits;
    copy_bits(t_bits, t);
    copy_bits(magic_bits, magic);
    const U n_bits = t_bits - magic_bits;
    const F r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;  // x − n ln 2, ln 2 in two parts
    F y = zero + 1.9875691500e-4f;                               // P(r) ≈ 1/2 + r/6 + r²/24 + …, Horner
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;  // exp(r), in [0.70, 1.42]
    copy_bits(y_bits, y);
    y_bits += n_bits << 23;  // · 2ⁿ
    F e;
    copy_bits(e, y_bits);
    x = tiny ? zero : (x != x ? x : e);  // x != x: NaN
}

}  // namespace

float exp_nonpositive(float x) {
    const float zero = 0.0f;
    exp_nonpositive_in_place<float, std::uint32_t, bool>(x, zero);
    return x;
}

ATTN_ROW_CLONES
float exp_row_sum(float* x, std::size_t n, float m) {
    const v8f zero = v8f{};
    v8f sum8 = zero;
    std::size_t j = 0;
    for (; j + lanes <= n; j += lanes) {
        v8f p;
        std::memcpy(&p, x + j, sizeof p);
        p -= m;
        exp_nonpositive_in_place<v8f, v8u, v8i>(p, zero);
        std::memcpy(x + j, &p, sizeof p);
        sum8 += p;
    }
    float sum = 0.0f;
    for (std::size_t l = 0; l < lanes; ++l) sum += sum8[l];
    for (; j < n; ++j) {
        x[j] = exp_nonpositive(x[j] - m);
        sum += x[j];
    }
    return sum;
}

}  // namespace attn
