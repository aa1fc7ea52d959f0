// How a matrix product reads an operand: as stored, or transposed. Both products, the CPU's (attn::fast::sgemm,
// fast/matmul.hpp) and the GPU's (attn::gpu::gemm_strided_batched, common/gpu/ops.hpp), take it by name:
//   sgemm(Op::transposed, Op::as_is, …)   // dW += xᵀ dy
// and the GPU's products take a precision (Matmul) by name.
#pragma once

namespace attn {

enum class Op { as_is, transposed };

// The precision of the GPU's products (cuBLAS's math mode). fp32: exact single precision, the CPU's result to
// fp32 rounding (the default everywhere). tf32: TensorFloat-32 tensor cores, which read each operand with a
// 10-bit mantissa (about 3 significant decimal digits) and add in fp32: faster, opt-in (bench_lm_train --tf32),
// and not the CPU's numbers to fp32 rounding.
enum class Matmul { fp32, tf32 };

}  // namespace attn
