#include "fast/matmul.hpp"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "core/blas.hpp"
#include "core/error.hpp"
#include "core/side_by_side.hpp"
#include "parallel.hpp"

namespace attn::fast {

namespace {
// Threads: one pool (parallel.hpp) for the products and for the library's loops. OpenBLAS itself stays on one
// thread. A large product is cut into pieces, rows of C (or columns, when C is wider than tall), each piece an
// OpenBLAS call of its own, and the threads share the pieces out. How a product is cut depends on its shape
// alone (pieces()), never on the thread count: one thread runs the very same calls one after another, so the
// thread count changes how fast a product runs, never its bits, whatever kernel OpenBLAS runs. (A piece need
// not round as the uncut product would: OpenBLAS's kernels choose their own ways through a sum by shape.)
//
// Without fix_blas_threads, a process runs on one thread until its first product of 1e8 flops or more (the
// chapter's sizes: (8192, 128) × (128, 128) is 2.7e8), and from then on on every core: test-sized runs, whose
// products are small, gain nothing from a second thread. That switch changes speed only, as above.
int pinned = 0;               // fix_blas_threads: 0 = choose by size
bool large_seen = false;      // a product of ≥ kLargeFlops has run: every core from now on
std::size_t split_count = 0;  // products shared between threads so far
constexpr double kLargeFlops = 1e8;
// A product under this many flops is one piece: waking other threads costs more than it saves.
constexpr double kPieceFlops = 4e6;
// At most this many pieces (so at most this many copies of the operand every piece reads), and no more than
// kPieceSide rows (or columns) and kPieceFlops flops of the whole product per piece allow.
constexpr int kMaxPieces = 8;
constexpr int kPieceSide = 64;

CBLAS_TRANSPOSE cblas(Op op) { return op == Op::transposed ? CblasTrans : CblasNoTrans; }

// The number of pieces a product is cut into: from its shape alone.
int pieces(int m, int n, int k) {
    const double flops = 2.0 * m * n * k;
    const int side = std::max(m, n);
    return std::max(1, std::min({kMaxPieces, side / kPieceSide, static_cast<int>(std::min(flops / kPieceFlops, double{kMaxPieces}))}));
}

// Start of piece i of n cut in `parts`: every piece starts at a multiple of 16 rows (the kernels' tile) and all
// but the last hold the same count; the last may be shorter, and trailing ones empty (n = 520 in 8: six of 80,
// one of 40, one of 0).
int piece_start(int n, int parts, int i) {
    const int per = (n + parts - 1) / parts;
    return std::min(n, (per + 15) / 16 * 16 * i);
}

int threads_for(double flops, int parts) {
    if (on_pool_thread()) return 1;  // inside a parallel loop: that loop has the threads
    if (flops >= kLargeFlops) large_seen = true;
    return std::min(parts, blas_threads());
}
}  // namespace

void fix_blas_threads(int n) { pinned = n; }

// ATTN_THREADS=N in the environment caps every count below at N threads (core/side_by_side.hpp's usable_cores: the
// tests set 1, since ctest runs two programs at a time on two cores, and each is fastest alone on its core).
int available_threads() { return usable_cores(); }

int blas_threads() { return pinned > 0 ? pinned : large_seen ? usable_cores() : 1; }

int loop_threads() { return blas_threads(); }

std::size_t split_products() { return split_count; }

void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // an empty sum: C = beta · C, written out so that no BLAS corner case is relied on
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    blas_on_one_thread();
    const bool rows = m >= n;  // cut the longer side of C
    const int side = rows ? m : n, parts = pieces(m, n, k);
    const std::size_t ua = static_cast<std::size_t>(lda), ub = static_cast<std::size_t>(ldb), uc = static_cast<std::size_t>(ldc);
    const auto piece = [&](int p) {
        const int lo = piece_start(side, parts, p), hi = piece_start(side, parts, p + 1);
        const std::size_t o = static_cast<std::size_t>(lo);
        if (hi <= lo) return;
        if (rows)  // rows [lo, hi) of C: rows of op(A)
            cblas_sgemm(CblasRowMajor, cblas(op_a), cblas(op_b), hi - lo, n, k, alpha, op_a == Op::as_is ? a + o * ua : a + o,
                        lda, b, ldb, beta, c + o * uc, ldc);
        else  // columns [lo, hi) of C: columns of op(B)
            cblas_sgemm(CblasRowMajor, cblas(op_a), cblas(op_b), m, hi - lo, k, alpha, a, lda, op_b == Op::as_is ? b + o : b + o * ub,
                        ldb, beta, c + o, ldc);
    };
    const int threads = threads_for(2.0 * m * n * k, parts);
    if (threads <= 1) {
        for (int p = 0; p < parts; ++p) piece(p);
        return;
    }
    ++split_count;
    run_on_threads(threads, [&](int i, int t) {  // thread i: pieces [parts·i/t, parts·(i+1)/t)
        for (int p = parts * i / t; p < parts * (i + 1) / t; ++p) piece(p);
    });
}

namespace {
int as_int(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw Error("matmul: dimension " + std::to_string(n) + " exceeds BLAS's int");
    return static_cast<int>(n);
}
}  // namespace

Mat matmul(const Mat& a, const Mat& b) {
    require(a.shape(1) == b.shape(0), "matmul",
            "inner dimensions differ: " + shape_str(a) + " @ " + shape_str(b));
    Mat c = Mat::from_shape({a.shape(0), b.shape(1)});  // sgemm with beta = 0 writes every entry
    sgemm(Op::as_is, Op::as_is, as_int(a.shape(0)), as_int(b.shape(1)), as_int(a.shape(1)), 1.0f, a.data(),
          as_int(a.shape(1)), b.data(), as_int(b.shape(1)), 0.0f, c.data(), as_int(c.shape(1)));
    return c;
}

Mat matmul_nt(const Mat& a, const Mat& b) {
    require(a.shape(1) == b.shape(1), "matmul_nt",
            "feature dimensions differ: " + shape_str(a) + " @ " + shape_str(b) + "ᵀ");
    Mat c = Mat::from_shape({a.shape(0), b.shape(0)});
    sgemm(Op::as_is, Op::transposed, as_int(a.shape(0)), as_int(b.shape(0)), as_int(a.shape(1)), 1.0f, a.data(),
          as_int(a.shape(1)), b.data(), as_int(b.shape(1)), 0.0f, c.data(), as_int(c.shape(1)));
    return c;
}

Tensor3 bmm_nt(const Tensor3& a, const Tensor3& b) {
    const std::size_t B = a.shape(0), n = a.shape(1), k = a.shape(2), m = b.shape(1);
    if (b.shape(0) != B || b.shape(2) != k)
        throw Error("bmm_nt: batch or inner dimensions differ: " + shape_str(a) + " @ (ᵀ) " + shape_str(b));
    Tensor3 c = Tensor3::from_shape({B, n, m});
    for (std::size_t i = 0; i < B; ++i)
        sgemm(Op::as_is, Op::transposed, as_int(n), as_int(m), as_int(k), 1.0f, a.data() + i * n * k, as_int(k),
              b.data() + i * m * k, as_int(k), 0.0f, c.data() + i * n * m, as_int(m));
    return c;
}

}  // namespace attn::fast
