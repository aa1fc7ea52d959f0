// How a matrix product reads an operand: as stored, or transposed. Both products, the CPU's (attn::sgemm,
// attn/matmul.hpp) and the GPU's (attn::gpu::gemm_strided_batched, common/gpu/ops.hpp), take it by name:
//   sgemm(Op::transposed, Op::as_is, …)   // dW += xᵀ dy
#pragma once

namespace attn {

enum class Op { as_is, transposed };

}  // namespace attn
