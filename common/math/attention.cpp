#include "math/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

namespace {
// The checks attention() and tiled_attention() share; messages are built only when a check fails.
void check_qkv(const Mat& q, const Mat& k, const Mat& v) {
    if (q.shape(1) != k.shape(1)) throw Error("attention: q " + shape_str(q) + " and k " + shape_str(k) + " differ in d_k");
    if (k.shape(0) != v.shape(0))
        throw Error("attention: k " + shape_str(k) + " and v " + shape_str(v) + " differ in the number of keys T_k");
    if (q.shape(1) == 0) throw Error("attention: d_k is 0 in q " + shape_str(q));
    require_finite(q, "attention (q)"), require_finite(k, "attention (k)"), require_finite(v, "attention (v)");
}
}  // namespace

AttentionSteps attention(const Mat& q, const Mat& k, const Mat& v, const Mask* keep, bool scale, const Mat* bias) {
    check_qkv(q, k, v);  // the reference engine calls this once per sequence and head at every step
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

Mat tiled_attention(const Mat& q, const Mat& k, const Mat& v, bool causal, std::size_t tile) {
    check_qkv(q, k, v);
    const std::size_t T_q = q.shape(0), T_k = k.shape(0), d_v = v.shape(1);
    if (tile == 0) throw Error("tiled_attention: tile is 0");
    if (T_k == 0) throw Error("tiled_attention: k " + shape_str(k) + " holds no keys: a softmax over none is undefined");
    if (causal && T_q != T_k)
        throw Error("tiled_attention: the causal mask needs as many queries as keys; q " + shape_str(q) + ", k " + shape_str(k));
    const float inv_sqrt_dk = 1.0f / std::sqrt(static_cast<float>(q.shape(1)));
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();
    Mat out = Mat::from_shape({T_q, d_v});  // (T_q, d_v)
    for (std::size_t i0 = 0; i0 < T_q; i0 += tile) {
        const std::size_t rows = std::min(tile, T_q - i0);
        const Mat q_i = xt::view(q, xt::range(i0, i0 + rows), xt::all());  // (rows, d_k)
        Mat m = Mat::from_shape({rows, 1});                                 // (rows, 1) running max
        m.fill(minus_inf);
        Mat l = xt::zeros<float>({rows, std::size_t{1}});                   // (rows, 1) running sum
        Mat acc = xt::zeros<float>({rows, d_v});                            // (rows, d_v) unnormalised output
        const std::size_t key_end = causal ? i0 + rows : T_k;  // a causal row sees no key past itself
        for (std::size_t j0 = 0; j0 < key_end; j0 += tile) {
            const std::size_t cols = std::min(tile, key_end - j0);
            const Mat k_j = xt::view(k, xt::range(j0, j0 + cols), xt::all());  // (cols, d_k)
            const Mat v_j = xt::view(v, xt::range(j0, j0 + cols), xt::all());  // (cols, d_v)
            Mat s = xt::linalg::dot(q_i, xt::transpose(k_j)) * inv_sqrt_dk;     // (rows, cols)
            Mat tile_max = Mat::from_shape({rows, 1});  // (rows, 1) each row's largest score in this tile
            for (std::size_t r = 0; r < rows; ++r) {
                tile_max(r, 0) = minus_inf;
                for (std::size_t c = 0; c < cols; ++c) {
                    if (causal && j0 + c > i0 + r) {  // a key past the row's own position
                        s(r, c) = minus_inf;
                    } else if (std::isnan(s(r, c)) || s(r, c) == -minus_inf) {  // q·k overflowed fp32
                        throw Error("tiled_attention: score at (" + std::to_string(i0 + r) + ", " + std::to_string(j0 + c) + ") of (" +
                                    std::to_string(T_q) + ", " + std::to_string(T_k) + ") is " + (std::isnan(s(r, c)) ? "NaN" : "+inf") +
                                    "; scores must be finite");
                    }
                    tile_max(r, 0) = std::max(tile_max(r, 0), s(r, c));
                }
            }
            const Mat m_new = xt::maximum(m, tile_max);  // (rows, 1)
            // Shifted by m' (by 0 in a row whose scores so far are all −inf, where m − m' would be NaN): the first
            // tile's c = exp(−inf − m') = 0 wipes acc's zeros, and a −inf score gets p = 0.
            const Mat shift = xt::where(xt::equal(m_new, minus_inf), 0.0f, m_new);  // (rows, 1)
            const Mat c = xt::exp(m - shift);                                        // (rows, 1)
            const Mat p = xt::exp(s - shift);                                        // (rows, cols)
            l *= c;  // in place: (rows, 1) and (rows, d_v) rescaled, then the tile's share added
            l += xt::sum(p, {1}, xt::keep_dims);
            acc *= c;
            acc += xt::linalg::dot(p, v_j);
            m = m_new;
        }
        for (std::size_t r = 0; r < rows; ++r)  // l ≥ 1 once a row has one finite score: its max contributes exp(0)
            if (l(r, 0) == 0.0f)
                throw Error("tiled_attention: row " + std::to_string(i0 + r) + " of (" + std::to_string(T_q) + ", " + std::to_string(T_k) +
                            ") is fully masked: every score it sees is −inf");
        xt::view(out, xt::range(i0, i0 + rows), xt::all()) = acc / l;
    }
    return out;
}

}  // namespace attn
