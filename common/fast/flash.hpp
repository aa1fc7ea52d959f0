// Section 9.8, the n² wall and FlashAttention: causal multi-head attention computed one tile at a time,
// so that no T×T matrix ever exists.
//
// causal_attention_forward (multi_head.hpp) materialises scores and weights, (B·h, T, T) each: at T =
// 16,384 with h = 8 heads that is 8 · 16,384² · 4 B = 8 GiB per matrix. The tiled version computes the
// same output with FlashAttention's recurrence (the online softmax, math/online_softmax.hpp). For every
// (batch, head, query tile of `tile` rows) it walks the key tiles left to right:
//
//   scores = q_tile k_tileᵀ / √d_head         one SGEMM into a (tile, tile) buffer
//   causal mask on the diagonal tile          key tiles entirely after the query tile are never computed
//   per row: m' = max(m, max scores), c = exp(m − m'), p = exp(scores − m'), l' = c·l + Σ p
//   acc = c · acc + p v_tile                  the rescale per row, then one SGEMM, (tile, d_head)
//
// and after the last key tile out = acc / l. Memory: besides q, k, v and the (B·T, d_model) output,
// each worker holds O(tile² + tile·d_head) floats (the scores tile, the accumulator, m and l per row):
// 64 · 64 + 64 · 64 floats = 32 KiB at tile = 64, d_head = 64, whatever T is. Time stays O(T² d): the
// tiling saves memory (and, on a GPU, traffic to slow memory), not arithmetic.
//
// Two code paths compute the same recurrence:
//   fast = true (the default): the P·V product of a tile is an SGEMM (acc += p v_tile after each row
//     of acc is rescaled by its c), and exp runs over whole rows, vectorised (fast/vmath.hpp's exp_poly);
//   fast = false (the plain path): every row of every tile is folded by online_softmax_update, the
//     plain per-row code that the GPU kernels share. Slower (P·V as scalar loops), but it is the
//     recurrence as written in the chapter, and the tests hold the fast path to it.
// Both are deterministic: each (batch, head, query tile) is computed by one worker, in a fixed order,
// with the same arithmetic whichever worker runs it, so the output is bit-identical run to run and for
// any number of threads.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace attn::fast {

// q, k, v (B·T, d_model), as causal_attention_forward takes them: heads split the feature axis
// (d_head = d_model / n_heads) and scores are scaled by 1/√d_head. Returns the merged head outputs
// (B·T, d_model), equal to causal_attention_forward's to fp32 rounding.
//
// tile: query and key rows per tile (a tile larger than T is T). On a 2-core Zen machine with OpenBLAS,
// 128 and 256 ran a few per cent faster than 64 at T = 4096 (bench_attention prints the sweep).
// threads: workers of the library's thread pool over the (batch·head, query tile) pairs, the calling thread one of them;
// 0 = automatic: one for small problems (under 1e8 useful flops, like attn's BLAS policy in
// matmul.hpp), else the cores this process may run on (at most ATTN_THREADS). Each tile product runs on its
// worker's thread (attn::fast::sgemm never splits a product inside a parallel loop); tiles of 2·tile²·d_head
// ≥ 1e8 flops run on one worker, one after another, each product split across the threads instead.
//
// Errors (attn::Error, naming the shapes): q, k, v of different shapes; rows ≠ B·T; d_model not
// divisible by n_heads (or n_heads = 0); tile = 0; a NaN or infinite entry in q, k or v; a score that
// overflows fp32 although q and k are finite.
Mat tiled_causal_attention(const Mat& q, const Mat& k, const Mat& v, std::size_t B, std::size_t T,
                           std::size_t n_heads, std::size_t tile = 64, bool fast = true, std::size_t threads = 0);

}  // namespace attn::fast
