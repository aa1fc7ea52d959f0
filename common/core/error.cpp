#include "core/error.hpp"

#include <cmath>

namespace attn {

void not_implemented(const std::string& exercise, const std::string& function, const std::string& what_to_do) {
    throw NotImplemented("not implemented: exercise " + exercise + " " + function + " — " + what_to_do);
}

void require_finite(const float* data, std::size_t n, const std::string& where, const std::string& shape) {
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(data[i])) {
            throw Error(where + ": input " + shape + " has a non-finite entry (" + std::to_string(data[i]) +
                        ") at flat index " + std::to_string(i));
        }
    }
}

}  // namespace attn
