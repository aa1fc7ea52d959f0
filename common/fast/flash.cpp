// Section 9.8, the n² wall and FlashAttention: the tiled causal attention of fast/flash.hpp.
//
// The unit of work is one (batch, head, query tile): `rows` ≤ tile query rows of one head, walked
// against the key tiles 0 … its own (the diagonal one). attend_tiles, just below, is the recurrence
// of math/online_softmax.hpp for all the rows of a unit at once. It reads q, k and v in place — head h
// of batch b is the column block [h·d_head, (h+1)·d_head) of rows [b·T, (b+1)·T), row stride d_model,
// which SGEMM takes directly as lda — so heads are never split into copies. The library's pool's
// workers (parallel.hpp) take the units one at a time and write disjoint blocks of the output.
#include "fast/flash.hpp"


#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fast/matmul.hpp"
#include "fast/vmath.hpp"
#include "math/online_softmax.hpp"
#include "parallel.hpp"

namespace attn::fast {

namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

int as_int(std::size_t n) { return static_cast<int>(n); }  // every dimension was checked to fit an int

struct Problem {
    const float *q, *k, *v;  // (B·T, d_model), row-major
    float* out;              // (B·T, d_model)
    std::size_t B, T, n_heads, d_model, d_head, tile, n_tiles;
    float scale;  // 1/√d_head
};

// One (batch, head, query tile) unit: query rows r0 … r0 + rows − 1 of one head, key tiles 0 … qt.
struct Unit {
    const float *q, *k, *v;  // this head's column block: row t at + t·d_model
    float* out;
    std::size_t r0, rows, qt;
};

// Per-worker buffers, O(tile² + tile·d_head): the only memory the tiling needs beyond the output.
struct Scratch {
    std::vector<float> scores;         // (tile, tile): one tile of scores, then of weights p
    std::vector<float> acc;            // (tile, d_head): Σ p v, unnormalised
    std::vector<OnlineSoftmax> state;  // (tile,): each row's running max m and running sum l
    std::vector<float> c;              // (tile,): each row's rescale factor exp(m − m') for this tile
    explicit Scratch(const Problem& p) : scores(p.tile * p.tile), acc(p.tile * p.d_head), state(p.tile), c(p.tile) {}
};

// scores = q_tile k_tileᵀ / √d_head for key tile kt: (rows, d_head) @ (keys, d_head)ᵀ → (rows, keys),
// row stride tile. Returns keys.
std::size_t score_tile(const Problem& p, const Unit& u, std::size_t kt, float* scores) {
    const std::size_t c0 = kt * p.tile, keys = std::min(p.T, c0 + p.tile) - c0;
    sgemm(Op::as_is, Op::transposed, as_int(u.rows), as_int(keys), as_int(p.d_head), p.scale, u.q + u.r0 * p.d_model,
          as_int(p.d_model), u.k + c0 * p.d_model, as_int(p.d_model), 0.0f, scores, as_int(p.tile));
    return keys;
}

// x[j] ← exp(x[j] − m) for j < n, in place: a row of scores becomes its unnormalised weights p (m ≥ every x[j]);
// returns Σ p. fast/vmath.hpp's exp and row sum, one loop GCC vectorises for each kind of x86-64 (ATTN_CLONES),
// the same operations in the same order in every clone.
ATTN_CLONES float exp_row_sum(float* x, std::size_t n, float m) {
    for (std::size_t j = 0; j < n; ++j) x[j] = exp_poly(x[j] - m);
    return row_sum(x, n);
}

// The fast path: online_softmax_update's step for every row of the tile, the softmax half row by row
// and the sum over keys of p v_tile as one SGEMM for all rows.
void attend_tiles(const Problem& p, const Unit& u, Scratch& w) {
    float* acc = w.acc.data();  // (rows, d_head)
    float* c = w.c.data();      // (rows,)
    std::fill(w.state.begin(), w.state.end(), online_softmax_start());
    // Key tiles 0 … qt: tiles after the diagonal one hold only future keys and are skipped entirely.
    for (std::size_t kt = 0; kt <= u.qt; ++kt) {
        const std::size_t c0 = kt * p.tile;
        const std::size_t keys = score_tile(p, u, kt, w.scores.data());  // (rows, keys)
        for (std::size_t i = 0; i < u.rows; ++i) {
            float* s = w.scores.data() + i * p.tile;  // row i: its scores, then its weights p
            auto& [m, l] = w.state[i];
            const std::size_t n = std::min(keys, u.r0 + i - c0 + 1);  // causal: keys ≤ query r0 + i (n ≥ 1)
            const float m_new = std::max(m, row_max(s, n));          // m' = max(m, max scores)
            c[i] = exp_poly(m - m_new);                              // c = exp(m − m'): ~0 on the first tile (m = −∞)
            const float sum = exp_row_sum(s, n, m_new);              // p = exp(scores − m'), and Σ p
            std::fill(s + n, s + keys, 0.0f);                        // masked keys: weight exactly 0
            l = c[i] * l + sum;                                      // l' = c·l + Σ p
            m = m_new;
        }
        if (kt > 0)  // acc ← c · acc, row by row (on the first tile acc is simply overwritten)
            for (std::size_t i = 0; i < u.rows; ++i)
                if (c[i] != 1.0f)
                    for (std::size_t j = 0; j < p.d_head; ++j) acc[i * p.d_head + j] *= c[i];
        // acc += p v_tile: (rows, keys) @ (keys, d_head) → (rows, d_head)
        sgemm(Op::as_is, Op::as_is, as_int(u.rows), as_int(p.d_head), as_int(keys), 1.0f, w.scores.data(), as_int(p.tile),
              u.v + c0 * p.d_model, as_int(p.d_model), kt == 0 ? 0.0f : 1.0f, acc, as_int(p.d_head));
    }
}

// The reference path: the chapter's per-row code, online_softmax_update, on every row of every tile,
// masked scores set to −∞. P·V runs as its scalar loops: slower, but the recurrence as written.
void attend_tiles_reference(const Problem& p, const Unit& u, Scratch& w) {
    std::fill(w.state.begin(), w.state.end(), online_softmax_start());
    std::fill(w.acc.begin(), w.acc.end(), 0.0f);
    for (std::size_t kt = 0; kt <= u.qt; ++kt) {
        const std::size_t c0 = kt * p.tile;
        const std::size_t keys = score_tile(p, u, kt, w.scores.data());  // (rows, keys)
        for (std::size_t i = 0; i < u.rows; ++i) {
            float* s = w.scores.data() + i * p.tile;
            for (std::size_t j = 0; j < keys; ++j)
                if (c0 + j > u.r0 + i) s[j] = neg_inf;  // the causal mask: key after query
            w.state[i] = online_softmax_update(w.state[i], s, as_int(keys), u.v + c0 * p.d_model, as_int(p.d_model),
                                               w.acc.data() + i * p.d_head, as_int(p.d_head));
        }
    }
}

// One unit, either path, then out = acc / l. bh = b·n_heads + h; qt = the query tile's index.
void attend_unit(const Problem& p, std::size_t bh, std::size_t qt, bool fast, Scratch& w) {
    const std::size_t b = bh / p.n_heads, h = bh % p.n_heads;
    const std::size_t offset = b * p.T * p.d_model + h * p.d_head;  // this head's column block in batch b
    const std::size_t r0 = qt * p.tile;
    const Unit u{p.q + offset, p.k + offset, p.v + offset, p.out + offset, r0, std::min(p.T, r0 + p.tile) - r0, qt};
    if (fast)
        attend_tiles(p, u, w);
    else
        attend_tiles_reference(p, u, w);
    for (std::size_t i = 0; i < u.rows; ++i)
        online_softmax_finish(w.state[i], w.acc.data() + i * p.d_head, u.out + (r0 + i) * p.d_model, as_int(p.d_head));
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
    require_finite(q, where + " (q)"), require_finite(k, where + " (k)"), require_finite(v, where + " (v)");

    Mat out = Mat::from_shape({B * T, d_model});  // every entry is written by exactly one unit
    if (out.size() == 0) return out;

    Problem p{};
    p.q = q.data(), p.k = k.data(), p.v = v.data(), p.out = out.data();
    p.B = B, p.T = T, p.n_heads = n_heads, p.d_model = d_model, p.d_head = d_model / n_heads;
    p.tile = std::min({tile, T, int_max});
    p.n_tiles = (T + p.tile - 1) / p.tile;
    p.scale = 1.0f / std::sqrt(static_cast<float>(p.d_head));  // as causal_attention_forward scales

    const std::size_t units = B * n_heads * p.n_tiles;
    const double useful_flops = 2.0 * static_cast<double>(B * d_model) * static_cast<double>(T) * static_cast<double>(T + 1);
    std::size_t workers = threads;
    if (workers == 0) workers = useful_flops < 1e8 ? 1 : static_cast<std::size_t>(available_threads());
    // Big tile products are worth splitting across the threads (matmul.cpp): then the units run one after
    // another.
    if (2.0 * static_cast<double>(p.tile) * static_cast<double>(p.tile) * static_cast<double>(p.d_head) >= 1e8) workers = 1;
    workers = std::min({workers, units, int_max});

    // Units in the order they are handed out: head by head, so that the workers share one head's k and
    // v in cache, and within a head the last query tiles (the most key tiles) first, so that the small
    // units at the end fill the gaps. A free worker takes the next unit (an atomic counter). Which worker
    // runs a unit varies run to run; what the unit computes does not, so the output is bit-identical for
    // any number of threads.
    // Each worker allocates its own scratch (allocated together by the calling thread, the buffers sat
    // side by side on one heap and 2 workers ran 1.4% slower). No exception may leave a worker: a failed
    // allocation is kept, that worker skips its units, and it is rethrown below.
    std::exception_ptr failure;
    std::mutex failure_mutex;
    std::atomic<std::size_t> next_unit{0};
    run_on_threads(static_cast<int>(workers), [&](int, int) {
        std::unique_ptr<Scratch> w;
        try {
            w = std::make_unique<Scratch>(p);
        } catch (...) {
            const std::lock_guard lock(failure_mutex);
            failure = std::current_exception();
            return;
        }
        for (std::size_t u = next_unit++; u < units; u = next_unit++)
            attend_unit(p, u / p.n_tiles, p.n_tiles - 1 - u % p.n_tiles, fast, *w);
    });
    if (failure) std::rethrow_exception(failure);

    // Finite q, k, v can still give an infinite score (|q·k| beyond fp32's range); say so rather than
    // return NaN.
    for (std::size_t i = 0; i < out.size(); ++i)
        if (!std::isfinite(out.data()[i]))
            throw Error(where + ": a score of q " + shape_str(q) + " overflowed fp32 (output row " +
                        std::to_string(i / d_model) + " is not finite); scores must be finite");
    return out;
}

}  // namespace attn::fast
