// Reference answers for Definition 9.1's exercises (see exercises/02_soft_lookup/soft_lookup.hpp).
#include "02_soft_lookup/soft_lookup.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ex {

Vec stable_softmax(const Vec& s) {
    if (s.size() == 0) throw attn::Error("stable_softmax: s is empty: no largest score to subtract");
    const float m = *std::max_element(s.begin(), s.end());
    Vec p = Vec::from_shape(s.shape());  // (n,)
    float sum = 0.0f;
    for (std::size_t i = 0; i < s.size(); ++i) sum += (p(i) = std::exp(s(i) - m));
    for (auto& x : p) x /= sum;
    return p;
}

namespace {
// The shapes 2.2 and 2.3 accept: q's d_k is k's, k and v have the same T_k, and T_k, d_k > 0.
void check_shapes(const char* where, const std::string& q_shape, std::size_t q_dk, const Mat& k, const Mat& v) {
    if (q_dk != k.shape(1))
        throw attn::Error(std::string(where) + ": q " + q_shape + " and k " + attn::shape_str(k) + " differ in d_k");
    if (k.shape(0) != v.shape(0))
        throw attn::Error(std::string(where) + ": k " + attn::shape_str(k) + " and v " + attn::shape_str(v) + " differ in T_k");
    if (k.shape(0) == 0 || k.shape(1) == 0)
        throw attn::Error(std::string(where) + ": k " + attn::shape_str(k) + " has no key or d_k = 0");
}
}  // namespace

Vec attention_row(const Vec& q, const Mat& k, const Mat& v) {
    check_shapes("attention_row", attn::shape_str(q), q.size(), k, v);
    const std::size_t T_k = k.shape(0), d_k = k.shape(1), d_v = v.shape(1);
    Vec scores = Vec::from_shape({T_k});  // (T_k,)
    for (std::size_t j = 0; j < T_k; ++j) {
        float dot = 0.0f;
        for (std::size_t c = 0; c < d_k; ++c) dot += q(c) * k(j, c);
        scores(j) = dot / std::sqrt(static_cast<float>(d_k));
    }
    const Vec weights = stable_softmax(scores);  // (T_k,)
    Vec out = xt::zeros<float>({d_v});           // (d_v,)
    for (std::size_t j = 0; j < T_k; ++j)
        for (std::size_t c = 0; c < d_v; ++c) out(c) += weights(j) * v(j, c);
    return out;
}

Mat attention(const Mat& q, const Mat& k, const Mat& v) {
    check_shapes("attention", attn::shape_str(q), q.shape(1), k, v);
    Mat out = Mat::from_shape({q.shape(0), v.shape(1)});  // (T_q, d_v)
    for (std::size_t t = 0; t < q.shape(0); ++t) {
        const Vec q_t = xt::row(q, static_cast<std::ptrdiff_t>(t));
        xt::row(out, static_cast<std::ptrdiff_t>(t)) = attention_row(q_t, k, v);
    }
    return out;
}

}  // namespace ex
