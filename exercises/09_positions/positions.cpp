// Your answers to the exercises of Section 9.6. Each body is a stub that throws; replace it.
#include "09_positions/positions.hpp"

#include <cmath>

#include "core/error.hpp"

namespace ex {

Mat sinusoidal_table(std::size_t T, std::size_t d) {
    (void)T, (void)d;
    attn::not_implemented("9.1", "sinusoidal_table", "the (T, d) sinusoidal table of the 2017 paper (see the hints in positions.hpp)");
}

Mat rope_rotate(const Mat& x, std::size_t first_position) {
    (void)x, (void)first_position;
    attn::not_implemented("9.2", "rope_rotate", "rotate each pair of columns by an angle set by the row's position");
}

Mat alibi_bias(std::size_t T, std::size_t n_heads, std::size_t head) {
    (void)T, (void)n_heads, (void)head;
    attn::not_implemented("9.3", "alibi_bias", "the (T, T) linear distance penalty of this head, below the diagonal");
}

}  // namespace ex
