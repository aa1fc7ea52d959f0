// Your answers to the exercises of Section 9.6. Each body is a stub that throws; replace it.
#include "09_positions/positions.hpp"

#include <cmath>

#include "attn/error.hpp"

namespace ex {

Mat sinusoidal_table(std::size_t T, std::size_t d) {
    (void)T, (void)d;
    attn::not_implemented("9.1", "sinusoidal_table", "sin and cos of i / 10000^(2t/d) in columns 2t and 2t+1");
}

Mat rope_rotate(const Mat& x, std::size_t first_position) {
    (void)x, (void)first_position;
    attn::not_implemented("9.2", "rope_rotate", "rotate each pair of row i by (first_position + i) * 10000^(-2t/d)");
}

Mat alibi_bias(std::size_t T, std::size_t n_heads, std::size_t head) {
    (void)T, (void)n_heads, (void)head;
    attn::not_implemented("9.3", "alibi_bias", "-2^(-8 head / n_heads) * (t - i) on and below the diagonal");
}

}  // namespace ex
