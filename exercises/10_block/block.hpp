// Exercises for Sections 9.5, 9.7 and 9.8: the block's size, the n² wall, and the tile update that
// gets around it. Write the bodies in block.cpp beside this file; check with `tools/progress.sh` or
// `./build/bin/exercise_tests "[sec10]"`.
#pragma once

#include <cstddef>

#include "attn/online_softmax.hpp"

namespace ex {

/// Exercise 10.1 — gpt2_param_count
/// The parameters of a GPT-2-shaped model, from its shape alone: a token table (V, d), a learned
/// position table (n_ctx, d), n_layers blocks of 12 d² + 13 d (W_q, W_k, W_v, W_o with biases: 4d² + 4d;
/// the FFN W_1 (d, 4d) + b_1 + W_2 (4d, d) + b_2: 8d² + 5d; two LayerNorms: 4d), a final LayerNorm (2d),
/// and an output layer tied to the token table (no parameters of its own).
/// GPT-2 small (V = 50,257, n_ctx = 1,024, d = 768, 12 layers) has 124,439,808.
/// Hint: use std::size_t throughout; d² overflows int long before GPT-2 sizes.
std::size_t gpt2_param_count(std::size_t V, std::size_t n_ctx, std::size_t d, std::size_t n_layers);

/// Exercise 10.2 — attention_matrix_bytes
/// The bytes of one n × n attention matrix per head (the scores, or the weights after softmax) for a
/// batch of B sequences of n tokens, h heads, in fp32: B · h · n² · 4. One layer at d = 512, h = 8,
/// n = 16,384 needs 8 GiB for one of them — the chapter's out-of-memory row.
/// Hint: the result is a std::size_t; multiply in that type.
std::size_t attention_matrix_bytes(std::size_t B, std::size_t h, std::size_t n);

/// Exercise 10.3 — online_softmax_tile
/// One step of FlashAttention's recurrence for one query row: fold a tile of n scores s[0..n) (already
/// scaled; −inf for masked keys) and their value rows v (row j at v + j·d_head) into the running state
/// (m, l) and the unnormalised output acc[0..d_head):
///     m' = max(m, max_j s_j);  c = exp(m − m');  l' = c·l + Σ_j exp(s_j − m');  acc' = c·acc + Σ_j exp(s_j − m') v_j
/// Return the new state. A tile whose scores are all −inf changes nothing (return the state as it was;
/// exp(−inf − (−inf)) would be NaN). After the last tile the output is acc / l.
/// Hint: compute m' first; on the very first tile m = −inf, so c = exp(−inf) = 0 and acc's old
/// contents are wiped, which is what you want.
attn::OnlineSoftmax online_softmax_tile(attn::OnlineSoftmax state, const float* s, int n, const float* v, int d_head,
                                        float* acc);

}  // namespace ex
