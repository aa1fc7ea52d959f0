// Reference answers for Section 9.3's exercises (see exercises/05_multi_head/multi_head.hpp).
#include "05_multi_head/multi_head.hpp"

#include "core/error.hpp"

namespace ex {

std::vector<Mat> split_heads(const Mat& x, std::size_t n_heads) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    if (n_heads == 0 || d % n_heads != 0)
        throw attn::Error("split_heads: d_model " + std::to_string(d) + " is not divisible by " + std::to_string(n_heads) + " heads");
    const std::size_t dh = d / n_heads;
    std::vector<Mat> heads;
    for (std::size_t h = 0; h < n_heads; ++h) {
        Mat head = Mat::from_shape({T, dh});  // (T, d_head)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < dh; ++j) head(t, j) = x(t, h * dh + j);
        heads.push_back(head);
    }
    return heads;
}

Mat merge_heads(const std::vector<Mat>& heads) {
    if (heads.empty()) throw attn::Error("merge_heads: no head to merge");
    for (const Mat& head : heads)
        if (head.shape() != heads[0].shape())
            throw attn::Error("merge_heads: head 0 is " + attn::shape_str(heads[0]) + " but another is " + attn::shape_str(head));
    const std::size_t T = heads[0].shape(0), dh = heads[0].shape(1);
    Mat x = Mat::from_shape({T, heads.size() * dh});  // (T, n_heads·d_head)
    for (std::size_t h = 0; h < heads.size(); ++h)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < dh; ++j) x(t, h * dh + j) = heads[h](t, j);
    return x;
}

std::size_t attention_param_count(std::size_t d_model, std::size_t n_heads, Biases biases) {
    if (n_heads == 0 || d_model % n_heads != 0)
        throw attn::Error("attention_param_count: d_model " + std::to_string(d_model) + " is not divisible by " + std::to_string(n_heads) + " heads");
    const std::size_t d_head = d_model / n_heads;
    const std::size_t per_head = 3 * d_model * d_head;  // this head's columns of W_q, W_k, W_v
    return n_heads * per_head + d_model * d_model + (biases == Biases::included ? 4 * d_model : 0);  // + W_o, + biases
}

}  // namespace ex
