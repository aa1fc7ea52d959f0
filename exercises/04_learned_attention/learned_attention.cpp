// Your answers to the exercises of Sections 9.1 and 9.3. Each body is a stub that throws; replace it.
#include "04_learned_attention/learned_attention.hpp"

#include "core/error.hpp"

namespace ex {

Mat qk_scores(const Mat& x, const Mat& W_q, const Mat& W_k) {
    (void)x, (void)W_q, (void)W_k;
    attn::not_implemented("4.1", "qk_scores", "the scaled scores of one head (see learned_attention.hpp)");
}

LinearGrads linear_backward(const Mat& x, const Mat& W, const Mat& dy) {
    (void)x, (void)W, (void)dy;
    attn::not_implemented("4.2", "linear_backward", "the gradients of y = x W + b for x, W and b");
}

Vec softmax_backward(const Vec& w, const Vec& dw) {
    (void)w, (void)dw;
    attn::not_implemented("4.3", "softmax_backward", "the gradient of the scores from the gradient of the weights");
}

}  // namespace ex
