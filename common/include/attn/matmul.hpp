// Matrix products that really call SGEMM (OpenBLAS's cblas_sgemm) on contiguous row-major buffers.
// For 3-D data we loop 2-D GEMMs over the batch: xt::linalg::dot on 3-D tensors would fall back to
// level-1 BLAS, many times slower.
#pragma once

#include "attn/op.hpp"
#include "attn/tensor.hpp"

namespace attn {

Mat matmul(const Mat& a, const Mat& b);     // (n, k) @ (k, m)   → (n, m)
Mat matmul_nt(const Mat& a, const Mat& b);  // (n, k) @ (m, k)ᵀ  → (n, m), e.g. scores = q kᵀ
Vec matvec(const Mat& a, const Vec& x);     // (n, k) @ (k,)     → (n,)
Vec vecmat(const Vec& x, const Mat& a);     // (n,)   @ (n, m)   → (m,), e.g. one weights row @ v

Tensor3 bmm(const Tensor3& a, const Tensor3& b);     // (B, n, k) @ (B, k, m)  → (B, n, m)
Tensor3 bmm_nt(const Tensor3& a, const Tensor3& b);  // (B, n, k) @ (B, m, k)ᵀ → (B, n, m)
Tensor3 bmm_tn(const Tensor3& a, const Tensor3& b);  // (B, k, n)ᵀ @ (B, k, m) → (B, n, m), e.g. dv = wᵀ dout

// OpenBLAS threads: by default small products (< 1e8 flops) run on one thread and large ones on all;
// fix_blas_threads(n) pins every product to n threads (0 = back to the default), e.g. to time fairly.
void fix_blas_threads(int n);
// The threads OpenBLAS runs its next product with (after fix_blas_threads(n) and a product: n, where the
// OpenBLAS build has threads at all).
int blas_threads();

// C = alpha · op(A) · op(B) + beta · C on raw row-major buffers; the one place that calls cblas_sgemm.
void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);

}  // namespace attn
