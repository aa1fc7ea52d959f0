#include "math/attention.hpp"

#include <cmath>
#include <utility>

#include <xtensor-blas/xlinalg.hpp>

#include "core/error.hpp"
#include "math/softmax.hpp"

namespace attn {

AttentionSteps attention_from_scores(Mat scaled, const Mat& v, const Mask* keep) {
    if (scaled.shape(1) != v.shape(0))
        throw Error("attention: scores " + shape_str(scaled) + " have " + std::to_string(scaled.shape(1)) + " keys but v " +
                    shape_str(v) + " has " + std::to_string(v.shape(0)) + " values");
    AttentionSteps r;
    r.weights = keep ? masked_softmax(scaled, *keep) : softmax_rows(scaled);
    r.scaled = std::move(scaled);
    r.out = xt::linalg::dot(r.weights, v);  // (T_q, T_k) @ (T_k, d_v)
    return r;
}

AttentionSteps attention(const Mat& q, const Mat& k, const Mat& v, const Mask* keep, bool scale, const Mat* bias) {
    // The reference engine calls this once per sequence and head at every step: the messages are built only when a
    // check fails.
    if (q.shape(1) != k.shape(1)) throw Error("attention: q " + shape_str(q) + " and k " + shape_str(k) + " differ in d_k");
    if (k.shape(0) != v.shape(0))
        throw Error("attention: k " + shape_str(k) + " and v " + shape_str(v) + " differ in the number of keys T_k");
    if (q.shape(1) == 0) throw Error("attention: d_k is 0 in q " + shape_str(q));
    require_finite(q, "attention (q)"), require_finite(k, "attention (k)"), require_finite(v, "attention (v)");
    Mat scores = xt::linalg::dot(q, xt::transpose(k));  // (T_q, d_k) @ (d_k, T_k) → (T_q, T_k)
    const float inv_sqrt_dk = scale ? 1.0f / std::sqrt(static_cast<float>(q.shape(1))) : 1.0f;
    Mat scaled = scores * inv_sqrt_dk;  // (T_q, T_k)
    if (bias) {
        if (bias->shape() != scaled.shape())
            throw Error("attention: bias " + shape_str(*bias) + " does not match the scores " + shape_str(scaled) + " of q " +
                        shape_str(q) + " and k " + shape_str(k));
        scaled += *bias;
    }
    AttentionSteps r = attention_from_scores(std::move(scaled), v, keep);
    r.scores = std::move(scores);
    return r;
}

}  // namespace attn
