#include "fast/multi_head.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <mutex>
#include <vector>

#include <xtensor/xadapt.hpp>

#include "core/error.hpp"
#include "fast/matmul.hpp"
#include "fast/vmath.hpp"
#include "math/averaging.hpp"
#include "math/softmax.hpp"
#include "parallel.hpp"

namespace attn::fast {

ATTN_CLONES void causal_softmax(const float* scores, float* weights, std::size_t n_heads,
                                                              std::size_t T, float scale) {
    for (std::size_t r = 0; r < n_heads * T; ++r) {
        const std::size_t t = r % T;  // this row's position: it sees columns 0…t
        const float* s = scores + r * T;
        float* w = weights + r * T;
        const float m = row_max(s, t + 1);  // scale > 0, so the scaled row's max is scale·m
        for (std::size_t j = 0; j <= t; ++j) w[j] = exp_poly(scale * (s[j] - m));
        const float inv = 1.0f / row_sum(w, t + 1);
        for (std::size_t j = 0; j <= t; ++j) w[j] *= inv;
        for (std::size_t j = t + 1; j < T; ++j) w[j] = 0.0f;  // the future: exactly 0, as masked_softmax writes it
    }
}

namespace {

// One unit of work is one (sequence b, head h) pair: its (T, d_head) slices of q, k, v read in place from the
// (B·T, h·d_head) matrices (row stride h·d_head), its (T, T) weights, its slice of the output. Units share no
// output, so they run on any number of threads with the same result (parallel.hpp's pool, contiguous ranges).
struct Heads {
    const float *q, *k, *v;      // (B·T, h·d_k), (B·T, h·d_k), (B·T, h·d_v)
    std::size_t T, n_heads, dk, dv;
    std::size_t qk_stride() const { return n_heads * dk; }
    std::size_t v_stride() const { return n_heads * dv; }
    // where unit u's slice starts in a (B·T, h·width) matrix
    std::size_t at(std::size_t u, std::size_t width) const { return (u / n_heads) * T * n_heads * width + (u % n_heads) * width; }
};

// Rows of a causal unit in blocks of this many: a block of rows [r0, r1) reads only keys [0, r1), so the
// products skip most of the masked upper triangle (at T = 128, 3/8 of the square). What is skipped is what
// the mask sets to 0: the weights, the outputs and the gradients are those of the full products up to
// rounding (a sum over fewer terms may take another way through OpenBLAS's kernel; test_fast_paths.cpp
// holds them to the full products' within fp32's rounding bound). The blocks depend on T alone.
constexpr std::size_t kRowBlock = 32;

// block(r0, r1, keys) for blocks of rows [r0, r1) that cover [0, T): causal blocks need keys [0, r1), others
// (one block, unless `skip`) all T of them.
template <class F>
void by_row_blocks(std::size_t T, bool skip, F&& block) {
    const std::size_t step = skip ? kRowBlock : T;
    for (std::size_t r0 = 0; r0 < T; r0 += step) {
        const std::size_t r1 = std::min(T, r0 + step);
        block(r0, r1, skip ? r1 : T);
    }
}

int as_int(std::size_t n) { return static_cast<int>(n); }

// Runs unit(u, scratch) for every u < units, the units split in contiguous ranges over loop_threads() threads
// (parallel.hpp); each unit's products run on its thread. An exception in a unit is kept and rethrown here.
template <class F>
void for_each_unit(std::size_t units, double flops, F&& unit) {
    const int threads = flops < 1e6 ? 1 : std::min(loop_threads(), as_int(units));
    std::exception_ptr failure;
    std::mutex failure_mutex;
    run_on_threads(threads, [&](int i, int parts) {
        std::vector<float> scratch;  // this thread's own (T, T) buffer
        const std::size_t lo = units * static_cast<std::size_t>(i) / static_cast<std::size_t>(parts),
                          hi = units * static_cast<std::size_t>(i + 1) / static_cast<std::size_t>(parts);
        for (std::size_t u = lo; u < hi; ++u) {
            try {
                unit(u, scratch);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                return;
            }
        }
    });
    if (failure) std::rethrow_exception(failure);
}

// softmax_rows_backward over the columns 0…t that row t can see; the rest of the row is not read (the masked
// part of dw was never computed) and ds is 0 there. The same sum as over the whole row: the terms skipped
// are w = 0.
void causal_softmax_backward(const float* w, const float* dw, float* ds, std::size_t T) {
    for (std::size_t t = 0; t < T; ++t) {
        softmax_rows_backward(w + t * T, dw + t * T, ds + t * T, 1, t + 1);
        std::fill(ds + t * T + t + 1, ds + (t + 1) * T, 0.0f);
    }
}

}  // namespace

Mat causal_attention_forward(Mat q, Mat k, Mat v, std::size_t B, std::size_t T, std::size_t n_heads,
                             AttentionCache& cache, const AttentionOptions& options) {
    const bool uniform = options.weights == Weights::uniform, causal = options.causal;
    check_heads(v, B, T, n_heads);
    if (!uniform) {  // uniform weights never read q or k
        require(q.shape() == k.shape() && k.shape(0) == v.shape(0), "causal_attention_forward",
                "q " + shape_str(q) + ", k " + shape_str(k) + ", v " + shape_str(v) +
                    ": q and k must have one shape, and as many rows as v");
        check_heads(q, B, T, n_heads);
    }
    if (options.bias && !uniform) {
        const Tensor3& bias = *options.bias;
        require(bias.shape(0) == n_heads && bias.shape(1) == T && bias.shape(2) == T, "causal_attention_forward",
                "score bias " + shape_str(bias) + " is not (n_heads, T, T) = (" + std::to_string(n_heads) + ", " +
                    std::to_string(T) + ", " + std::to_string(T) + ")");
    }
    cache.kind = options.weights, cache.causal = causal;
    cache.v = std::move(v);
    if (uniform) cache.q = Mat(), cache.k = Mat();
    else cache.q = std::move(q), cache.k = std::move(k);
    const std::size_t BH = B * n_heads, dv = cache.v.shape(1) / n_heads, dk = uniform ? dv : cache.q.shape(1) / n_heads;
    const Heads H{cache.q.data(), cache.k.data(), cache.v.data(), T, n_heads, dk, dv};
    if (!uniform) cache.scale = options.scale ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;
    const bool fused = !uniform && causal && !options.bias;  // the training path: scale, mask and softmax in one pass
    cache.weights.resize({BH, T, T});
    Mat out = Mat::from_shape({B * T, n_heads * dv});
    // (T, T): softmax of the (causally masked) zero matrix
    const Mat A = !uniform ? Mat() : causal ? averaging_matrix(T) : Mat(xt::ones<float>({T, T}) / static_cast<float>(T));
    const Mask keep = uniform || fused ? Mask() : causal ? causal_mask(T) : Mask(xt::ones<bool>({T, T}));
    // (B·h, T, T): the scores exist whole beside the weights; the tiled attention (flash.hpp) is the one that never
    // holds them.
    Tensor3 scores = uniform ? Tensor3() : Tensor3::from_shape({BH, T, T});
    for_each_unit(BH, 4.0 * static_cast<double>(BH * T * T * std::max(dk, dv)), [&](std::size_t u, std::vector<float>&) {
        float* w = cache.weights.data() + u * T * T;  // (T, T)
        if (uniform) {
            std::copy(A.data(), A.data() + T * T, w);
        } else {
            float* s = scores.data() + u * T * T;  // (T, T) = q kᵀ
            by_row_blocks(T, fused, [&](std::size_t r0, std::size_t r1, std::size_t keys) {
                sgemm(Op::as_is, Op::transposed, as_int(r1 - r0), as_int(keys), as_int(dk), 1.0f, H.q + H.at(u, dk) + r0 * H.qk_stride(),
                      as_int(H.qk_stride()), H.k + H.at(u, dk), as_int(H.qk_stride()), 0.0f, s + r0 * T, as_int(T));
            });
            if (fused) {
                causal_softmax(s, w, 1, T, cache.scale);
            } else {
                auto unit_scores = xt::adapt(s, T * T, xt::no_ownership(), std::array<std::size_t, 2>{T, T});
                if (options.scale) unit_scores *= cache.scale;
                if (options.bias) unit_scores += xt::view(*options.bias, u % n_heads);
                const Mat weights = masked_softmax(Mat(unit_scores), keep);
                std::copy(weights.data(), weights.data() + T * T, w);
            }
        }
        // out = w v: a causal row block reads only the keys it can see
        by_row_blocks(T, causal, [&](std::size_t r0, std::size_t r1, std::size_t keys) {
            sgemm(Op::as_is, Op::as_is, as_int(r1 - r0), as_int(dv), as_int(keys), 1.0f, w + r0 * T, as_int(T), H.v + H.at(u, dv),
                  as_int(H.v_stride()), 0.0f, out.data() + H.at(u, dv) + r0 * H.v_stride(), as_int(H.v_stride()));
        });
    });
    return out;  // (B·T, d_model)
}

void causal_attention_backward(const Mat& dout, const AttentionCache& cache, std::size_t B, std::size_t T,
                               std::size_t n_heads, Mat& dq, Mat& dk, Mat& dv) {
    require(dout.shape() == cache.v.shape(), "causal_attention_backward",
            "dout " + shape_str(dout) + " is not the shape of the forward's output " + shape_str(cache.v));
    const bool uniform = cache.kind == Weights::uniform, causal = cache.causal;
    const std::size_t BH = B * n_heads, d_v = cache.v.shape(1) / n_heads, d_k = uniform ? d_v : cache.q.shape(1) / n_heads;
    const Heads H{uniform ? nullptr : cache.q.data(), uniform ? nullptr : cache.k.data(), cache.v.data(), T, n_heads, d_k, d_v};
    dv = Mat::from_shape(cache.v.shape());
    if (uniform) {
        dq = xt::zeros<float>(dout.shape());
        dk = xt::zeros<float>(dout.shape());
    } else {
        dq = Mat::from_shape(cache.q.shape());
        dk = Mat::from_shape(cache.k.shape());
    }
    const int qk = as_int(H.qk_stride()), vs = as_int(H.v_stride());
    for_each_unit(BH, 8.0 * static_cast<double>(BH * T * T * std::max(d_k, d_v)), [&](std::size_t u, std::vector<float>& scratch) {
        const float* w = cache.weights.data() + u * T * T;
        const float* dout_u = dout.data() + H.at(u, d_v);
        // dv = wᵀ dout  (T, d_v)
        sgemm(Op::transposed, Op::as_is, as_int(T), as_int(d_v), as_int(T), 1.0f, w, as_int(T), dout_u, vs, 0.0f,
              dv.data() + H.at(u, d_v), vs);
        if (uniform) return;
        scratch.resize(T * T);
        float* ds = scratch.data();  // (T, T): dw = dout vᵀ, then ds in place
        by_row_blocks(T, causal, [&](std::size_t r0, std::size_t r1, std::size_t keys) {
            sgemm(Op::as_is, Op::transposed, as_int(r1 - r0), as_int(keys), as_int(d_v), 1.0f, dout_u + r0 * H.v_stride(), vs,
                  H.v + H.at(u, d_v), vs, 0.0f, ds + r0 * T, as_int(T));
        });
        if (causal)
            causal_softmax_backward(w, ds, ds, T);
        else
            softmax_rows_backward(w, ds, ds, T, T);  // masked: w = 0 → ds = 0
        if (cache.scale != 1.0f)
            for (std::size_t i = 0; i < T * T; ++i) ds[i] *= cache.scale;
        // dq = ds k / √d_head (the division is in ds): a causal row block reads only the keys it can see
        by_row_blocks(T, causal, [&](std::size_t r0, std::size_t r1, std::size_t keys) {
            sgemm(Op::as_is, Op::as_is, as_int(r1 - r0), as_int(d_k), as_int(keys), 1.0f, ds + r0 * T, as_int(T), H.k + H.at(u, d_k), qk,
                  0.0f, dq.data() + H.at(u, d_k) + r0 * H.qk_stride(), qk);
        });
        // dk = dsᵀ q / √d_head
        sgemm(Op::transposed, Op::as_is, as_int(T), as_int(d_k), as_int(T), 1.0f, ds, as_int(T), H.q + H.at(u, d_k), qk, 0.0f,
              dk.data() + H.at(u, d_k), qk);
    });
}

}  // namespace attn::fast
