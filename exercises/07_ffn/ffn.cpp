// Your answers to the exercises of Section 9.5 (the FFN). Each body is a stub that throws; replace it.
#include "07_ffn/ffn.hpp"

#include <cmath>

#include "core/error.hpp"

namespace ex {

Mat gelu(const Mat& x) {
    (void)x;
    attn::not_implemented("7.1", "gelu", "the exact GELU of each entry (see the hints in ffn.hpp)");
}

Mat gelu_tanh(const Mat& x) {
    (void)x;
    attn::not_implemented("7.2", "gelu_tanh", "GPT-2's tanh approximation of GELU, entry by entry (see the hints in ffn.hpp)");
}

Mat ffn_forward(const Mat& x, const Mat& W_1, const Mat& b_1, const Mat& W_2, const Mat& b_2) {
    (void)x, (void)W_1, (void)b_1, (void)W_2, (void)b_2;
    attn::not_implemented("7.3", "ffn_forward", "two affine maps with your gelu between them");
}

}  // namespace ex
