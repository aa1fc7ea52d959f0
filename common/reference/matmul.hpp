// The reference engine's one product: matmul(a, b) = a · b for 2-D matrices, one SGEMM through xtensor-blas
// written straight into the (rows of a, columns of b) result. Either factor may be a transpose, written
// transposed(x): matmul(dy, transposed(W)) = dy · Wᵀ. SGEMM then reads W where it lies, with its transpose flag,
// where xt::linalg::dot(dy, xt::transpose(W)) first copies Wᵀ out row-major and returns an xt::xarray that a Mat
// copies again. The same sums in the same order: the same bits, two copies less.
#pragma once

#include <array>
#include <string>
#include <type_traits>

#include <xtensor-blas/xblas.hpp>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace attn::reference {

// A matrix used transposed in a product: it holds a reference, so it lives no longer than the expression.
struct Transposed {
    const Mat& m;
};
inline Transposed transposed(const Mat& m) { return {m}; }

namespace detail {
// (rows, columns) of a factor as the product sees it
inline std::array<std::size_t, 2> dims(const Mat& a) { return {a.shape(0), a.shape(1)}; }
inline std::array<std::size_t, 2> dims(const Transposed& a) { return {a.m.shape(1), a.m.shape(0)}; }
inline const Mat& stored(const Mat& a) { return a; }
inline const Mat& stored(const Transposed& a) { return a.m; }
inline std::string describe(const Mat& a) { return shape_str(a); }
inline std::string describe(const Transposed& a) { return "transposed " + shape_str(a.m); }
}  // namespace detail

// a · b for a, b each a Mat or transposed(Mat): (rows of a, columns of b)
template <class A, class B>
Mat matmul(const A& a, const B& b) {
    const auto da = detail::dims(a), db = detail::dims(b);
    if (da[1] != db[0]) throw Error("matmul: a " + detail::describe(a) + " times b " + detail::describe(b) + ": a's columns must be b's rows");
    Mat c = Mat::from_shape({da[0], db[1]});
    xt::blas::gemm(detail::stored(a), detail::stored(b), c, std::is_same_v<A, Transposed>, std::is_same_v<B, Transposed>);  // beta 0: every entry written
    return c;
}

}  // namespace attn::reference
