// The fast engine's matrix products (attn::fast), which really call SGEMM (OpenBLAS's cblas_sgemm) on
// contiguous row-major buffers. For 3-D data we loop 2-D GEMMs over the batch: xt::linalg::dot on 3-D
// tensors would fall back to level-1 BLAS, many times slower.
#pragma once

#include <cstddef>

#include "core/op.hpp"
#include "core/tensor.hpp"

namespace attn::fast {

Mat matmul(const Mat& a, const Mat& b);     // (n, k) @ (k, m)   → (n, m)
Mat matmul_nt(const Mat& a, const Mat& b);  // (n, k) @ (m, k)ᵀ  → (n, m), e.g. scores = q kᵀ
// One 2-D product per batch entry, each on its contiguous slice: (B, n, k) @ (B, m, k)ᵀ → (B, n, m)
Tensor3 bmm_nt(const Tensor3& a, const Tensor3& b);

// Threads: a product of ≥ 4e6 flops is cut into pieces of rows (or columns) of C, at most 8, each piece an
// OpenBLAS call on one thread, and the threads share the pieces; smaller ones are one piece. The cut depends
// on the product's shape alone, so the thread count changes speed, never bits. fix_blas_threads(n) pins the
// count to n (0 = back to the default: one thread until the process's first product of ≥ 1e8 flops, every
// core after it), e.g. to time fairly. ATTN_THREADS=N in the environment caps the default at N threads.
void fix_blas_threads(int n);
// The threads a large product runs on now.
int blas_threads();
// Products shared between threads since the program started (a test's proof that threads really ran).
std::size_t split_products();
// The library's own parallel loops (attention's (sequence, head) units, rows of the elementwise layers) run
// on as many threads as a large product, from the same pool. They split outputs, never a sum. A product
// issued inside one of them runs on its thread.
int loop_threads();

// C = alpha · op(A) · op(B) + beta · C on raw row-major buffers; the one place that calls cblas_sgemm.
void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);

}  // namespace attn::fast
