// Training on the GPU, the layers' side: what a step of attn::fast::Model does on the CPU (fast/layers.hpp,
// train/optim.hpp), as device operations. Every backward *accumulates* parameter gradients (+=) and *writes*
// the gradient of its input (=), as the CPU library's. Every reduction runs in a fixed order (no float
// atomics), so the same inputs give the same bits on every run.
//
// Plain C++ on device pointers (DeviceBuffer::data(), DeviceInts::data()): no CUDA types, no xtensor. The
// kernels are in train_layer_kernels.cuh, the launches in train_layers.cu; the unit tests run the same
// kernels on the CPU (tests/common/gpu_train_layers_on_cpu.cpp). Each call checks its arguments, launches on
// the default stream and returns without waiting; a failure throws attn::Error naming the call.
#pragma once

#include <cstddef>
#include <vector>

#include "buffer.hpp"

namespace attn::gpu {

// --- LayerNorm -----------------------------------------------------------------------------------------------
// y = gain ⊙ (x − mean) · rstd + bias per row, as attn::fast::layernorm_forward; keeps mean and rstd (N) for the
// backward. x, y (N, d); gain, bias (1, d).
void layernorm_forward(const float* x, const float* gain, const float* bias, float* y, float* mean, float* rstd, int N,
                       int d, float eps = 1e-5f);
// dy (N, d) → dx (N, d) (written); dgain += Σ_rows dy ⊙ xhat, dbias += Σ_rows dy, xhat = (x − mean) · rstd
// recomputed from the forward's mean and rstd. dx: one warp per row. The column sums in a fixed order: a block
// covers 32 columns, its 8 warps sum rows g, g + 8, … and their 8 partial sums are added in g order (no
// atomics: the same bits on every run; to fp32 rounding of the CPU's row-by-row sums). Past 256 rows the sums
// are cut into chunks whose partial rows go to `scratch`, grown as needed and kept by the caller (a layer keeps
// its own, so that a training step allocates nothing); null: a buffer allocated for the call.
void layernorm_backward(const float* dy, const float* x, const float* gain, const float* mean, const float* rstd,
                        float* dx, float* dgain, float* dbias, int N, int d, DeviceBuffer* scratch = nullptr);

// --- elementwise -----------------------------------------------------------------------------------------------
// dx = dy · (Φ(x) + x φ(x)), the exact GELU's derivative; n elements; dx may be dy.
void gelu_backward(const float* x, const float* dy, float* dx, std::size_t n);
// dbias (1, cols) += Σ_rows dy (rows, cols), each column summed in the fixed order of layernorm_backward's, with
// its scratch as there.
void bias_backward(const float* dy, float* dbias, int rows, int cols, DeviceBuffer* scratch = nullptr);
// y += x, n elements (a residual's gradient reaching both branches).
void add_inplace(float* y, const float* x, std::size_t n);
// x *= s, n elements.
void scale_inplace(float* x, std::size_t n, float s);
// Σ x[i]², accumulated in double in a fixed order; waits for the device. The clip's global norm is the square
// root of these sums over the tensors, added on the host in the tensors' order (attn::clip_grad_norm's).
// Each block sums its share in double (at most 256 blocks, a fixed tree within each); the host adds the
// blocks' sums in block order, from a small buffer the call allocates (on the ledger). n = 0 gives 0.
double sum_squares(const float* x, std::size_t n);

// A model's tensors, for the work a step does on every one of them, one launch each where a launch per tensor
// made these about half of a step's launches: zeroing the gradients, AdamW's update (adamw_update on each, the
// same blocks, elements and bits), and gradient clipping's factor. The pointers are taken at construction: the
// buffers must not move.
class TensorGroup {
public:
    struct Tensor {
        float *w, *g, *m, *v;  // value, gradient, AdamW's two moments: n floats each on the device
        std::size_t n;
        bool decay;            // AdamW's weight decay applies (not to biases and gains)
    };
    explicit TensorGroup(const std::vector<Tensor>& tensors);
    void zero_grads();  // every g = 0
    // Gradient clipping with nothing copied to the host: the factor attn::clip_grad_norm multiplies every gradient
    // by (clip / norm where the global L2 norm is past clip, else 1), one float on the device that adamw reads.
    // The norm is summed as the host sums it, bit for bit: each tensor's Σ g² in double over sum_squares' blocks in
    // block order, then the tensors in their order. Two launches: every tensor's block sums (each tensor the blocks
    // sum_squares gives it), then the factor (a thread a tensor, one adding the tensors). clip > 0; the scratch is
    // made at the first call.
    const float* clip_factor(double clip);
    // adamw_update on every tensor: weight_decay where the tensor decays, else 0; grad_scale as there
    void adamw(float lr, float beta1, float beta2, float eps, float weight_decay, float bc1, float bc2,
               const float* grad_scale = nullptr);

private:
    int tensors_ = 0, blocks_ = 0, sum_blocks_ = 0;
    DeviceBuffer slots_;        // (tensors) TensorSlot
    DeviceInts first_;          // (tensors + 1): each tensor's first block, elementwise_blocks(n) each
    DeviceInts sum_first_;      // the same for sum_squares_blocks(n): the clip's
    DeviceBuffer block_sums_;   // (sum blocks) doubles, two floats each
    DeviceBuffer tensor_sums_;  // (tensors) doubles
    DeviceBuffer scale_;        // (1) the clip's factor
};

// --- embeddings -----------------------------------------------------------------------------------------------------
// x[n] = wte[tokens[n]] + (wpe ? wpe[n mod T] : 0) + (table ? table[n mod T] : 0); x (B·T, d), wte (V, d),
// wpe and table (≥ T, d), tokens (B·T) on the device. `table` is a fixed (sinusoidal) table, never trained.
// The sums in the CPU's order (token row + position row, then + table row): the same bits as attn::fast::Model's.
// A token outside [0, V) cannot throw on the device: its row is written NaN (never read out of bounds).
void embedding_forward(const int* tokens, const float* wte, const float* wpe, const float* table, float* x, int B, int T,
                       int d, int V);
// dwte[v] += Σ_{n: tokens[n] = v} dx[n], dwpe[t] += Σ_b dx[b·T + t] (dwpe may be null). Deterministic: the
// positions of each token are grouped on the host (TokenGroups) and summed in ascending order, into the
// gradient's start value, as the CPU's loop adds them: the same bits as attn::fast::embedding_backward. One block per
// distinct token (threads over the columns); dwpe one thread per (t, column), b ascending.
struct TokenGroups {
    DeviceInts token;     // (G) the distinct tokens of the batch, ascending
    DeviceInts start;     // (G + 1) group g's positions are position[start[g] … start[g + 1])
    DeviceInts position;  // (N) row indices n, grouped by token, ascending within a group
    int groups = 0;       // G
};
// On the host (a counting sort), then uploaded; throws attn::Error for no tokens or a negative one. A batch's
// groups serve every embedding_backward of that batch.
TokenGroups group_tokens(const std::vector<int>& tokens);
// The same into `groups`, whose device buffers are kept when they hold the batch (capacity for N tokens: a
// training loop allocates them once, not every step).
void group_tokens(const std::vector<int>& tokens, TokenGroups& groups);
void embedding_backward(const TokenGroups& groups, const float* dx, float* dwte, float* dwpe, int B, int T, int d);

// --- cross-entropy, fused with the softmax and its backward ----------------------------------------------------------
// Per row n of logits (N, V): p = softmax(logits[n]); with t = targets[n] ≥ 0, loss[n] = −log p[t] and
// dlogits[n] = (p − onehot(t)) / counted; with t = −1 the row is not scored: loss[n] = 0, dlogits[n] = 0.
// Returns Σ loss / counted, summed in row order in double (waits for the device). counted = the number of rows
// with t ≥ 0 (the caller knows it from the host copy of the targets). dlogits may be null (evaluation) or
// logits itself (in place: each block reads its row before it writes it). losses (N) may be null: the call
// then allocates them for its duration. One block per row (V threads rounded to warps, at most 256):
// loss = log Σ exp(z − max) − (z[t] − max), computed in float; a target ≥ V gives a NaN loss (no throw on the
// device). Matches attn::fast::cross_entropy_forward/backward to fp32 rounding (expf against the CPU's polynomial).
double cross_entropy(const float* logits, const int* targets, float* losses, float* dlogits, int N, int V, int counted);
// The same in two halves, for a forward recorded as a CUDA Graph (ops.hpp): the kernel alone (losses required),
// then the mean of the row losses, read back and summed in row order (waits for the device).
void cross_entropy_rows(const float* logits, const int* targets, float* losses, float* dlogits, int N, int V, int counted);
double mean_loss(const float* losses, int N, int counted);

// --- positions inside attention -----------------------------------------------------------------------------------------
// RoPE on merged rows: x (B·T, n_heads·d_k); for every head's pair (x_{2j}, x_{2j+1}) of the row at position t,
// rotate by sign·angle, with cos and sin from angles (T, d_k): cos t·ω_j in column 2j, sin t·ω_j in 2j+1 (the
// CPU library's rope_angles). sign +1 forward, −1 backward (Rᵀ). In place. The same bits as the CPU's
// rotate_pairs (math/positions.cpp): each product and sum rounded separately, never fused.
void rope_rotate(float* x, const float* angles, int B, int T, int n_heads, int d_k, float sign);

// --- AdamW ------------------------------------------------------------------------------------------------------------------
// One tensor's update, exactly attn::AdamW::step's arithmetic in float: with bc1 = 1 − β1^t, bc2 = 1 − β2^t
// (computed on the host as the CPU does), m = β1 m + (1 − β1) g; v = β2 v + (1 − β2) g²;
// w −= lr (m/bc1 / (√(v/bc2) + eps) + decay w). n elements. The same bits as the CPU's step (tested over 3
// steps, on the CPU's emulation and on an H200): every operation IEEE round-to-nearest, none fused.
// grad_scale (1) on the device, or null: g is read as g · grad_scale (TensorGroup::clip_factor's factor: clip_grad_norm's scaling,
// folded into the update; the same bits as scaling g first).
void adamw_update(float* w, const float* g, float* m, float* v, std::size_t n, float lr, float beta1, float beta2, float eps,
                  float decay, float bc1, float bc2, const float* grad_scale = nullptr);

}  // namespace attn::gpu
