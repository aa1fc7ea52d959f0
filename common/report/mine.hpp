// `--mine`: run the learner's exercise function on the section's example beside the library's
// reference and say where they differ. A stub that is not written yet is reported, not fatal.
#pragma once

#include <cmath>
#include <exception>
#include <ostream>
#include <string>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "report/table.hpp"

namespace attn {

namespace detail {
template <class T>
std::string first_difference(const T& mine, const T& ref, double tol) {
    if (mine.shape() != ref.shape()) return "shape " + shape_str(mine) + ", expected " + shape_str(ref);
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double d = std::fabs(static_cast<double>(mine.data()[i]) - ref.data()[i]);
        if (std::isnan(d)) {  // a NaN is a difference, whatever comes after it
            worst = d;
            at = i;
            break;
        }
        if (d > worst) {
            worst = d;
            at = i;
        }
    }
    if (!std::isnan(worst) && worst <= tol) return "";
    std::string where = "flat index " + std::to_string(at);
    if constexpr (std::tuple_size_v<std::decay_t<decltype(ref.shape())>> == 2) {
        where = "(" + std::to_string(at / ref.shape(1)) + ", " + std::to_string(at % ref.shape(1)) + ")";
    }
    return "max |diff| " + fmt_sci(worst) + " at " + where + ": yours " + fmt(mine.data()[at], 4) + ", reference " +
           fmt(ref.data()[at], 4);
}
inline std::string first_difference(double mine, double ref, double tol) {
    const double d = std::fabs(mine - ref);
    return d <= tol ? "" : "yours " + fmt(mine, 6) + ", reference " + fmt(ref, 6);
}
}  // namespace detail

// learner: a callable returning the same type as `reference`.
template <class F, class R>
bool compare_mine(std::ostream& os, const std::string& label, F&& learner, const R& reference, double tol = 1e-5) {
    os << "  " << label << ": ";
    try {
        const R mine = learner();
        const std::string diff = detail::first_difference(mine, reference, tol);
        os << (diff.empty() ? "matches the reference" : "DIFFERS — " + diff) << "\n";
        return diff.empty();
    } catch (const NotImplemented& e) {
        os << "not written yet (" << e.what() << ")\n";
    } catch (const std::exception& e) {
        os << "threw: " << e.what() << "\n";
    }
    return false;
}

}  // namespace attn
