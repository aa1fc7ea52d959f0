// The GPU module without a GPU, for the unit tests. The module's .cu files that launch through
// kernel_launch.cuh — buffer.cu, attention.cu, train_layers.cu, attention_train.cu — are compiled here as C++
// (gpu_*_on_cpu.cpp include them after cuda_on_cpu.hpp), their kernels run by the emulator; gpu_ops_on_cpu.cpp
// stands in for layers.cu alone, whose products are cuBLAS calls: a column-major reference SGEMM called
// exactly as layers.cu calls cuBLAS. So the plain C++ above the kernels — block.cpp and transformer_gpu.cpp,
// compiled into the unit tests unchanged — runs against the CPU model on any machine. "Device pointers" here
// are host pointers.
#pragma once

namespace gpu_on_cpu {

// C = alpha op(A) op(B) + beta C, all column-major as in Fortran's BLAS and cuBLAS: op(A) is (m, k),
// op(B) (k, n), C (m, n); element (i, j) of a matrix with leading dimension ld is at [i + j·ld].
void column_major_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda,
                        const float* B, int ldb, float beta, float* C, int ldc);

}  // namespace gpu_on_cpu
