// Section 9.8, the n² wall and FlashAttention: the tiled causal attention of attn/flash.hpp.
//
// The unit of work is one (batch, head, query tile): `rows` ≤ tile query rows of one head, walked
// against the key tiles 0 … its own (the diagonal one). It reads q, k and v in place — head h of batch
// b is the column block [h·d_head, (h+1)·d_head) of rows [b·T, (b+1)·T), row stride d_model, which
// SGEMM takes directly as lda — so heads are never split into copies. Workers take units from a shared
// counter (head by head, the largest query tiles first) and write disjoint blocks of the output.
#include "attn/flash.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "attn/error.hpp"
#include "attn/matmul.hpp"
#include "attn/online_softmax.hpp"

// The fast path's row loops (max, exp, sum) are compiled twice, for AVX2 and for baseline x86-64, and
// the loader picks the one the CPU runs (GCC's target_clones). Neither clone has FMA, so no a·b + c is
// fused and both give the same bits. Off x86-64, under a sanitizer, or with Clang: one version for the
// compiler's target. (The vector types are GNU extensions, which GCC and Clang both have.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define ATTN_ROW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ATTN_ROW_CLONES
#endif

namespace attn {

namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// ------------------------------------------------------------------------------------------------
// Row kernels of the fast path, on 8 floats at a time with GCC's vector extensions (one AVX2 register;
// two SSE registers in the baseline clone). Every lane does the same IEEE operations in both clones and
// every sum is taken in the order written here, so the result does not depend on the instruction set.

using v8f = float __attribute__((vector_size(32)));
using v8i = std::int32_t __attribute__((vector_size(32)));
using v8u = std::uint32_t __attribute__((vector_size(32)));
constexpr std::size_t lanes = 8;
// Vectors travel by reference, never by value: a 32-byte vector argument is passed differently with
// and without AVX, and the baseline clone must not depend on that.

// x ← exp(x) for x ≤ 0, the only arguments the online softmax passes (scores minus their running max).
// Cephes' expf: x = n ln 2 + r with n = round(x / ln 2) and |r| ≤ ln 2 / 2, exp(r) by a degree-6
// polynomial, and 2ⁿ put into the exponent bits. Relative error about 2 ulp. exp(−∞) = 0; arguments
// below −86.5 (exp < 3e-38, nothing against a row sum ≥ 1) also give 0; NaN stays NaN. F is float or
// v8f: the same operations in the same order for one float and for eight, so both give equal bits.
template <class To, class From>
inline void copy_bits(To& to, const From& from) {  // std::bit_cast, but without returning a vector by value
    static_assert(sizeof(To) == sizeof(From));
    std::memcpy(&to, &from, sizeof to);
}

template <class F, class U, class M>
inline void exp_nonpositive_in_place(F& x, const F& zero) {
    const M tiny = x < zero - 86.5f;
    const F xc = tiny ? zero - 86.5f : x;
    const F magic = zero + 12582912.0f;                 // 1.5 · 2²³: adding it rounds to an integer
    const F t = xc * 1.44269504088896341f + magic;     // n = round(x · log2 e), held in t's low bits
    const F n = t - magic;
    U t_bits, magic_bits, y_bits;
    copy_bits(t_bits, t);
    copy_bits(magic_bits, magic);
    const U n_bits = t_bits - magic_bits;
    const F r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;  // x − n ln 2, ln 2 in two parts
    F y = zero + 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;                                           // exp(r), in [0.70, 1.42]
    copy_bits(y_bits, y);
    y_bits += n_bits << 23;  // · 2ⁿ
    F e;
    copy_bits(e, y_bits);
    x = tiny ? zero : (x != x ? x : e);
}
inline float exp_nonpositive(float x) {
    const float zero = 0.0f;
    exp_nonpositive_in_place<float, std::uint32_t, bool>(x, zero);
    return x;
}

// max of x[0..n)
inline float row_max(const float* x, std::size_t n) {
    v8f m8 = v8f{} + neg_inf;
    std::size_t j = 0;
    for (; j + lanes <= n; j += lanes) {
        v8f xj;
        std::memcpy(&xj, x + j, sizeof xj);
        m8 = xj > m8 ? xj : m8;
    }
    float m = neg_inf;
    for (std::size_t l = 0; l < lanes; ++l) m = m8[l] > m ? m8[l] : m;
    for (; j < n; ++j) m = x[j] > m ? x[j] : m;
    return m;
}

// x[j] ← exp(x[j] − m) for j < n, in place (scores become unnormalised weights p); returns Σ_j p_j,
// summed lane by lane and then over the lanes in order.
inline float exp_row_sum(float* x, std::size_t n, float m) {
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

// The softmax half of one step of the recurrence, for every row of a scores tile s (rows, keys), row
// stride lds. Row i is query diag + i counted from the key tile's first key, so it may see keys
// 0 … diag + i (the causal mask); later entries become 0, which removes them from the P·V product.
// Updates the running max m and sum l of each row and returns in c the factor exp(m − m') by which the
// caller rescales that row of the accumulator before adding p v_tile.
ATTN_ROW_CLONES
void fold_scores_tile(float* s, std::size_t lds, std::size_t rows, std::size_t keys, std::size_t diag, float* m,
                      float* l, float* c) {
    for (std::size_t i = 0; i < rows; ++i) {
        float* row = s + i * lds;
        const std::size_t n = std::min(keys, diag + i + 1);  // ≥ 1: the diagonal key is always allowed
        const float m_new = std::max(m[i], row_max(row, n));
        c[i] = exp_nonpositive(m[i] - m_new);  // 0 on the first tile: exp(−∞ − m') = 0
        const float sum = exp_row_sum(row, n, m_new);
        for (std::size_t j = n; j < keys; ++j) row[j] = 0.0f;  // masked: weight exactly 0
        l[i] = c[i] * l[i] + sum;
        m[i] = m_new;
    }
}

// ------------------------------------------------------------------------------------------------

// Everything a worker needs to compute one (batch, head, query tile) unit.
struct Problem {
    const float *q, *k, *v;  // (B·T, d_model), row-major
    float* out;              // (B·T, d_model)
    std::size_t B, T, n_heads, d_model, d_head, tile, n_tiles;
    float scale;  // 1/√d_head
};

// Per-worker buffers, O(tile² + tile·d_head): the only memory the tiling needs beyond the output.
struct Scratch {
    std::vector<float> scores;  // (tile, tile): one tile of scores, then of weights p
    std::vector<float> acc;     // (tile, d_head): Σ p v, unnormalised
    std::vector<float> m, l, c;  // (tile,) each: running max, running sum, this tile's rescale factor
    std::vector<OnlineSoftmax> state;  // (tile,): the reference path's per-row (m, l)
    explicit Scratch(const Problem& p)
        : scores(p.tile * p.tile), acc(p.tile * p.d_head), m(p.tile), l(p.tile), c(p.tile), state(p.tile) {}
};

int as_int(std::size_t n) { return static_cast<int>(n); }  // every dimension was checked to fit an int

// One unit, both paths. bh = b·n_heads + h; qt = the query tile's index.
void attend_unit(const Problem& p, std::size_t bh, std::size_t qt, bool fast, Scratch& w) {
    const std::size_t b = bh / p.n_heads, h = bh % p.n_heads;
    const std::size_t offset = b * p.T * p.d_model + h * p.d_head;  // this head's column block in batch b
    const float *qh = p.q + offset, *kh = p.k + offset, *vh = p.v + offset;  // row t at + t·d_model
    float* oh = p.out + offset;
    const int ld = as_int(p.d_model), tile = as_int(p.tile), dh = as_int(p.d_head);
    const std::size_t r0 = qt * p.tile, r1 = std::min(p.T, r0 + p.tile), rows = r1 - r0;
    float* scores = w.scores.data();  // (rows, keys) of (tile, tile)
    float* acc = w.acc.data();        // (rows, d_head)

    if (fast) {
        std::fill(w.m.begin(), w.m.end(), neg_inf);
        std::fill(w.l.begin(), w.l.end(), 0.0f);
    } else {
        std::fill(w.state.begin(), w.state.end(), online_softmax_start());
        std::fill(w.acc.begin(), w.acc.end(), 0.0f);
    }
    // Key tiles 0 … qt: tiles after the diagonal one hold only future keys and are skipped entirely.
    for (std::size_t kt = 0; kt <= qt; ++kt) {
        const std::size_t c0 = kt * p.tile, keys = std::min(p.T, c0 + p.tile) - c0;
        // scores = q_tile k_tileᵀ / √d_head: (rows, d_head) @ (keys, d_head)ᵀ → (rows, keys)
        sgemm(false, true, as_int(rows), as_int(keys), dh, p.scale, qh + r0 * p.d_model, ld, kh + c0 * p.d_model, ld,
              0.0f, scores, tile);
        if (fast) {
            // online_softmax_update's step for all rows of the tile at once: m', c and l' per row here,
            // then acc' = c · acc + p v_tile with the sum over keys done by SGEMM instead of a loop.
            fold_scores_tile(scores, p.tile, rows, keys, r0 - c0, w.m.data(), w.l.data(), w.c.data());
            if (kt > 0) {  // acc ← c · acc, row by row (on the first tile acc is simply overwritten)
                for (std::size_t i = 0; i < rows; ++i)
                    if (w.c[i] != 1.0f)
                        for (std::size_t j = 0; j < p.d_head; ++j) acc[i * p.d_head + j] *= w.c[i];
            }
            // acc += p v_tile: (rows, keys) @ (keys, d_head) → (rows, d_head)
            sgemm(false, false, as_int(rows), dh, as_int(keys), 1.0f, scores, tile, vh + c0 * p.d_model, ld,
                  kt == 0 ? 0.0f : 1.0f, acc, dh);
        } else {  // the reference: the shared per-row code, masked entries as −∞
            for (std::size_t i = 0; i < rows; ++i) {
                float* row = scores + i * p.tile;
                for (std::size_t j = 0; j < keys; ++j)
                    if (c0 + j > r0 + i) row[j] = neg_inf;  // the causal mask: key after query
                w.state[i] = online_softmax_update(w.state[i], row, as_int(keys), vh + c0 * p.d_model, ld,
                                                   acc + i * p.d_head, dh);
            }
        }
    }
    for (std::size_t i = 0; i < rows; ++i) {  // out = acc / l
        const OnlineSoftmax final_state = fast ? OnlineSoftmax{w.m[i], w.l[i]} : w.state[i];
        online_softmax_finish(final_state, acc + i * p.d_head, oh + (r0 + i) * p.d_model, dh);
    }
}

std::string dims(std::size_t a, std::size_t b) { return std::to_string(a) + "·" + std::to_string(b); }

}  // namespace

Mat tiled_causal_attention(const Mat& q, const Mat& k, const Mat& v, std::size_t B, std::size_t T,
                           std::size_t n_heads, std::size_t tile, bool fast, std::size_t threads) {
    const std::string where = "tiled_causal_attention";
    require(q.shape() == k.shape() && k.shape() == v.shape(), where,
            "q " + shape_str(q) + ", k " + shape_str(k) + ", v " + shape_str(v) + " must have one shape");
    require(q.shape(0) == B * T, where,
            "q " + shape_str(q) + " does not hold B·T = " + dims(B, T) + " = " + std::to_string(B * T) + " rows");
    const std::size_t d_model = q.shape(1);
    require(n_heads > 0 && d_model % n_heads == 0, where,
            "d_model " + std::to_string(d_model) + " of q " + shape_str(q) + " is not divisible by n_heads = " +
                std::to_string(n_heads));
    require(tile > 0, where, "tile must be at least 1 (got 0)");
    constexpr std::size_t int_max = static_cast<std::size_t>(std::numeric_limits<int>::max());
    require(d_model <= int_max, where, "d_model " + std::to_string(d_model) + " exceeds BLAS's int");
    require_finite(q.data(), q.size(), where + " (q)", shape_str(q));
    require_finite(k.data(), k.size(), where + " (k)", shape_str(k));
    require_finite(v.data(), v.size(), where + " (v)", shape_str(v));

    Mat out = Mat::from_shape({B * T, d_model});  // every entry is written by exactly one unit
    if (out.size() == 0) return out;

    Problem p{};
    p.q = q.data(), p.k = k.data(), p.v = v.data(), p.out = out.data();
    p.B = B, p.T = T, p.n_heads = n_heads, p.d_model = d_model, p.d_head = d_model / n_heads;
    p.tile = std::min({tile, T, int_max});
    p.n_tiles = (T + p.tile - 1) / p.tile;
    p.scale = 1.0f / std::sqrt(static_cast<float>(p.d_head));  // as causal_attention_forward scales

    // Units in the order they are handed out: head by head, so that the workers share one head's k and
    // v in cache, and within a head the last query tiles (the most key tiles) first, so that the small
    // units at the end fill the gaps.
    const std::size_t units = B * n_heads * p.n_tiles;
    auto run_unit = [&](std::size_t u, Scratch& w) {
        const std::size_t bh = u / p.n_tiles, qt = p.n_tiles - 1 - u % p.n_tiles;
        attend_unit(p, bh, qt, fast, w);
    };

    const double useful_flops = 2.0 * static_cast<double>(B * d_model) * static_cast<double>(T) * static_cast<double>(T + 1);
    std::size_t workers = threads;
    if (workers == 0) workers = useful_flops < 1e8 ? 1 : std::max(1u, std::thread::hardware_concurrency());
    // Big tile products are worth BLAS's own threads (matmul.cpp gives products ≥ 1e8 flops all of them):
    // then the units run one after another.
    if (2.0 * static_cast<double>(p.tile) * static_cast<double>(p.tile) * static_cast<double>(p.d_head) >= 1e8) workers = 1;
    workers = std::min(workers, units);

    if (workers == 1) {
        Scratch w(p);
        for (std::size_t u = 0; u < units; ++u) run_unit(u, w);
    } else {
        // attn::sgemm sets OpenBLAS's thread count by product size and remembers it in a plain variable.
        // One small product here, before the workers start, sets it for the small tile products, so the
        // workers only ever read that variable (no data race) and each product runs on the worker's thread.
        float one = 1.0f, sink = 0.0f;
        sgemm(false, false, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &sink, 1);

        std::atomic<std::size_t> next{0};
        std::exception_ptr failure;
        std::mutex failure_mutex;
        auto work = [&] {
            try {
                Scratch w(p);
                for (std::size_t u = next++; u < units; u = next++) run_unit(u, w);
            } catch (...) {  // e.g. std::bad_alloc for the scratch: stop everyone, rethrow below
                const std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next = units;
            }
        };
        std::vector<std::thread> pool;
        pool.reserve(workers - 1);
        try {
            for (std::size_t i = 0; i + 1 < workers; ++i) pool.emplace_back(work);
        } catch (const std::system_error&) {
            // No more threads to be had: the workers that did start, and this thread, take every unit.
        }
        work();  // this thread is a worker too
        for (std::thread& t : pool) t.join();
        if (failure) std::rethrow_exception(failure);
    }
    // Finite q, k, v can still give an infinite score (|q·k| beyond fp32's range); say so rather than
    // return NaN.
    for (std::size_t i = 0; i < out.size(); ++i)
        if (!std::isfinite(out.data()[i]))
            throw Error(where + ": a score of q " + shape_str(q) + " overflowed fp32 (output row " +
                        std::to_string(i / d_model) + " is not finite); scores must be finite");
    return out;
}

}  // namespace attn
