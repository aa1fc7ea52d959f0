#include "attn/matmul.hpp"

#include <cblas.h>

#include <limits>

#include "attn/error.hpp"

namespace attn {

namespace {
// OpenBLAS wakes its threads for every call; on the small products of a tiny model that costs far more
// than it saves (measured: a pronoun-task run took 18 s with 2 threads, 8 s with 1). Small products run
// on one thread, large ones on all of them.
int pinned = 0;  // fix_blas_threads: 0 = choose by size
void threads_for(double flops) {
    static const int all = openblas_get_num_threads();
    static int current = all;
    const int want = pinned > 0 ? pinned : flops < 1e8 ? 1 : all;
    if (want != current) {
        openblas_set_num_threads(want);
        current = want;
    }
}
}  // namespace

void fix_blas_threads(int n) { pinned = n; }

int blas_threads() { return openblas_get_num_threads(); }

void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // an empty sum: C = beta · C, written out so that no BLAS corner case is relied on
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    threads_for(2.0 * m * n * k);
    const auto cblas = [](Op op) { return op == Op::transposed ? CblasTrans : CblasNoTrans; };
    cblas_sgemm(CblasRowMajor, cblas(op_a), cblas(op_b), m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
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

Vec matvec(const Mat& a, const Vec& x) {
    require(a.shape(1) == x.size(), "matvec", "shapes differ: " + shape_str(a) + " @ " + shape_str(x));
    Vec y = xt::zeros<float>({a.shape(0)});
    if (a.shape(0) > 0)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, as_int(a.shape(0)), as_int(a.shape(1)), 1.0f, a.data(),
                    as_int(a.shape(1)), x.data(), 1, 0.0f, y.data(), 1);
    return y;
}

Vec vecmat(const Vec& x, const Mat& a) {
    require(a.shape(0) == x.size(), "vecmat", "shapes differ: " + shape_str(x) + " @ " + shape_str(a));
    Vec y = xt::zeros<float>({a.shape(1)});
    if (a.shape(1) > 0)
        cblas_sgemv(CblasRowMajor, CblasTrans, as_int(a.shape(0)), as_int(a.shape(1)), 1.0f, a.data(),
                    as_int(a.shape(1)), x.data(), 1, 0.0f, y.data(), 1);
    return y;
}

namespace {
// The three batched products: one 2-D SGEMM per batch entry, each on its contiguous (rows, cols) slice.
// op(a) is (n, k) and op(b) is (k, m) in every case; op_a / op_b say whether the stored slice is transposed.
Tensor3 batched(const Tensor3& a, const Tensor3& b, Op op_a, Op op_b, const char* where, const char* op) {
    const bool ta = op_a == Op::transposed, tb = op_b == Op::transposed;
    const std::size_t n = ta ? a.shape(2) : a.shape(1), k = ta ? a.shape(1) : a.shape(2);
    const std::size_t kb = tb ? b.shape(2) : b.shape(1), m = tb ? b.shape(1) : b.shape(2);
    if (a.shape(0) != b.shape(0) || k != kb)
        throw Error(std::string(where) + ": batch or inner dimensions differ: " + shape_str(a) + op + shape_str(b));
    const std::size_t B = a.shape(0);
    Tensor3 c = Tensor3::from_shape({B, n, m});
    for (std::size_t i = 0; i < B; ++i) {
        sgemm(op_a, op_b, as_int(n), as_int(m), as_int(k), 1.0f, a.data() + i * n * k, as_int(a.shape(2)), b.data() + i * k * m,
              as_int(b.shape(2)), 0.0f, c.data() + i * n * m, as_int(m));
    }
    return c;
}
}  // namespace

Tensor3 bmm(const Tensor3& a, const Tensor3& b) { return batched(a, b, Op::as_is, Op::as_is, "bmm", " @ "); }
Tensor3 bmm_nt(const Tensor3& a, const Tensor3& b) { return batched(a, b, Op::as_is, Op::transposed, "bmm_nt", " @ (ᵀ) "); }
Tensor3 bmm_tn(const Tensor3& a, const Tensor3& b) { return batched(a, b, Op::transposed, Op::as_is, "bmm_tn", " (ᵀ) @ "); }

}  // namespace attn
