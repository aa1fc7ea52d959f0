// Tensor aliases used everywhere: fp32, row-major, fixed rank. Shapes are written in comments as
// (T, d_k) and so on; a Vec is one row, a Mat is a stack of rows, a Tensor3 a stack of matrices.
#pragma once

#include <cstddef>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

namespace attn {

using Vec = xt::xtensor<float, 1>;      // (n,)
using Mat = xt::xtensor<float, 2>;      // (rows, cols)
using Tensor3 = xt::xtensor<float, 3>;  // (batch, rows, cols)
using Mask = xt::xtensor<bool, 2>;      // (T_q, T_k), true = keep (see softmax.hpp)

// "(3, 4)" — the shape of any xtensor expression, for error messages and printing.
template <class E>
std::string shape_str(const E& e) {
    std::string s = "(";
    const auto& sh = e.shape();
    for (std::size_t i = 0; i < sh.size(); ++i) {
        s += std::to_string(sh[i]);
        if (i + 1 < sh.size()) s += ", ";
    }
    if (sh.size() == 1) s += ",";
    return s + ")";
}

}  // namespace attn
