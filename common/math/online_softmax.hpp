// Section 9.8: the online softmax — FlashAttention's recurrence, one tile at a time.
//
// For one query row, attention is  out = Σ_j softmax(s)_j v_j.  Seen a tile of keys at a time, keep
//   m    the largest score so far                  (running max)
//   l    Σ_j exp(s_j − m) over the keys so far     (running sum)
//   acc  Σ_j exp(s_j − m) v_j over the keys so far (unnormalised output, d_head floats)
// A new tile with scores s[0..n) and value rows v (n, d_head) moves them to
//   m' = max(m, max_j s_j),  c = exp(m − m'),  l' = c·l + Σ_j exp(s_j − m'),  acc' = c·acc + Σ_j exp(s_j − m') v_j
// and after the last tile  out = acc / l.  No row of n scores is ever kept: memory is O(tile), not O(n).
//
// Plain C++ with no xtensor and no allocation, marked __host__ __device__ under nvcc: the fast engine's tiled
// attention (fast/flash.hpp) and the GPU kernel (common/gpu) run this same code, so it is tested on the CPU.
// math/attention.hpp's tiled_attention (beneath both engines; 10_block's n² table runs it) writes the same
// recurrence in xtensor for a tile of query rows at once.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define ATTN_HD __host__ __device__
#else
#define ATTN_HD
#endif

namespace attn {

struct OnlineSoftmax {
    float m;  // running max of the scores seen (−inf before the first)
    float l;  // running Σ exp(s − m)
};

ATTN_HD inline OnlineSoftmax online_softmax_start() { return {-INFINITY, 0.0f}; }

// One tile: scores s[0..n) (already scaled and masked; −inf entries count for nothing), value rows
// v[j * ldv + c] for c < d_head, accumulator acc[0..d_head) updated in place. Returns the new state.
// A tile whose scores are all −inf leaves everything unchanged. acc must hold zeros before the first
// update (the first rescale is by exp(−inf) = 0, and 0 · NaN garbage would stay NaN). Scores must not
// be NaN or +inf: a NaN is skipped by the max but not by exp, and either makes the output NaN.
ATTN_HD inline OnlineSoftmax online_softmax_update(OnlineSoftmax state, const float* s, int n, const float* v,
                                                   int ldv, float* acc, int d_head) {
    float tile_max = -INFINITY;
    for (int j = 0; j < n; ++j) tile_max = s[j] > tile_max ? s[j] : tile_max;
    if (tile_max == -INFINITY) return state;
    const float m_new = state.m > tile_max ? state.m : tile_max;
    const float c = expf(state.m - m_new);  // 0 on the first tile (exp(−inf))
    for (int i = 0; i < d_head; ++i) acc[i] *= c;
    float l_new = state.l * c;
    for (int j = 0; j < n; ++j) {
        const float p = expf(s[j] - m_new);  // exp(−inf) = 0 for masked keys
        l_new += p;
        const float* vj = v + static_cast<long>(j) * ldv;
        for (int i = 0; i < d_head; ++i) acc[i] += p * vj[i];
    }
    return {m_new, l_new};
}

// out = acc / l. The caller guarantees at least one unmasked key (l > 0).
ATTN_HD inline void online_softmax_finish(OnlineSoftmax state, const float* acc, float* out, int d_head) {
    const float inv = 1.0f / state.l;
    for (int i = 0; i < d_head; ++i) out[i] = acc[i] * inv;
}

}  // namespace attn
