// Your answers to the exercises of Section 9.3. Each body is a stub that throws; replace it.
#include "05_multi_head/multi_head.hpp"

#include "core/error.hpp"

namespace ex {

std::vector<Mat> split_heads(const Mat& x, std::size_t n_heads) {
    (void)x, (void)n_heads;
    attn::not_implemented("5.1", "split_heads", "cut the feature axis into n_heads slices of d_head columns");
}

Mat merge_heads(const std::vector<Mat>& heads) {
    (void)heads;
    attn::not_implemented("5.2", "merge_heads", "put the heads' columns side by side, head 0 first");
}

std::size_t attention_param_count(std::size_t d_model, std::size_t n_heads, Biases biases) {
    (void)d_model, (void)n_heads, (void)biases;
    attn::not_implemented("5.3", "attention_param_count", "count W_q, W_k, W_v, W_o (and their biases)");
}

}  // namespace ex
