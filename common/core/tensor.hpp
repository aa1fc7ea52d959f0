// Tensor aliases used everywhere: fp32, row-major, fixed rank. Shapes are written in comments as
// (T, d_k) and so on; a Vec is one row, a Mat is a stack of rows, a Tensor3 a stack of matrices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"

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

// require_finite (core/error.hpp) on a whole tensor: one scan, and the shape written into the message only when
// an entry is NaN or ±inf, so that a check in a hot loop costs no string.
template <class E>
void require_finite(const E& e, const std::string& where) {
    if (!std::all_of(e.begin(), e.end(), [](float x) { return std::isfinite(x); }))
        require_finite(e.data(), e.size(), where, shape_str(e));
}

}  // namespace attn
