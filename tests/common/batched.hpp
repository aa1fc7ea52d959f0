// The batched products the tests compose a materialised attention from, beside the library's own
// fast::bmm_nt (fast/matmul.hpp): one fast::sgemm per batch entry on its contiguous slice.
#pragma once

#include <cstddef>
#include <string>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "fast/matmul.hpp"

namespace batched {

// op(a) (n, k) @ b (k, m) for each batch entry, op(a) = a as stored or transposed
inline attn::Tensor3 product(const attn::Tensor3& a, const attn::Tensor3& b, attn::Op op_a, const char* where) {
    const bool ta = op_a == attn::Op::transposed;
    const std::size_t B = a.shape(0), n = ta ? a.shape(2) : a.shape(1), k = ta ? a.shape(1) : a.shape(2), m = b.shape(2);
    if (b.shape(0) != B || b.shape(1) != k)
        throw attn::Error(std::string(where) + ": batch or inner dimensions differ: " + attn::shape_str(a) + ", " + attn::shape_str(b));
    attn::Tensor3 c = attn::Tensor3::from_shape({B, n, m});
    for (std::size_t i = 0; i < B; ++i)
        attn::fast::sgemm(op_a, attn::Op::as_is, int(n), int(m), int(k), 1.0f, a.data() + i * n * k, int(a.shape(2)),
                          b.data() + i * k * m, int(m), 0.0f, c.data() + i * n * m, int(m));
    return c;
}

// (B, n, k) @ (B, k, m) → (B, n, m)
inline attn::Tensor3 bmm(const attn::Tensor3& a, const attn::Tensor3& b) { return product(a, b, attn::Op::as_is, "bmm"); }
// (B, k, n)ᵀ @ (B, k, m) → (B, n, m), e.g. dv = wᵀ dout
inline attn::Tensor3 bmm_tn(const attn::Tensor3& a, const attn::Tensor3& b) { return product(a, b, attn::Op::transposed, "bmm_tn"); }

}  // namespace batched
