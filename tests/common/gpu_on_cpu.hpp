// The GPU module without a GPU, for the unit tests: gpu_ops_on_cpu.cpp defines everything that
// common/gpu/buffer.hpp and ops.hpp declare, on host memory, launching the real kernel source
// (common/gpu/*_kernels.cuh) through cuda_on_cpu.hpp with the launch shapes of launch.hpp, and doing
// cuBLAS's products with a column-major reference SGEMM called exactly as layers.cu calls cuBLAS. So the
// plain C++ above the kernels — block.cpp and transformer_gpu.cpp, compiled into the unit tests unchanged —
// runs against the CPU model on any machine. "Device pointers" here are host pointers.
#pragma once

namespace gpu_on_cpu {

// C = alpha op(A) op(B) + beta C, all column-major as in Fortran's BLAS and cuBLAS: op(A) is (m, k),
// op(B) (k, n), C (m, n); element (i, j) of a matrix with leading dimension ld is at [i + j·ld].
void column_major_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda,
                        const float* B, int ldb, float beta, float* C, int ldc);

}  // namespace gpu_on_cpu
