// The fast engine's layers (attn::fast), each a forward/backward pair of functions on plain tensors, as in
// llm.c's train_gpt2.c, with its speed tricks: blocked products, vectorised exp and erf, fused bias + GELU and
// bias + cross-entropy passes, rows split between threads. Each is tested against its twin of the reference
// engine (reference/layers.hpp, tests/common/test_fast_twins.cpp). Rows are positions: N = B·T rows, one per token of a batch of B
// sequences of length T. Every backward *accumulates* parameter gradients (+=) and *writes* the
// gradient of its input (=).
#pragma once

#include <vector>

#include "core/params.hpp"
#include "core/tensor.hpp"

namespace attn::fast {

// --- linear: y = x W (+ b) ---------------------------------------------------------------------------
// x (N, in), W (in, out), b (1, out) or null → y (N, out)
Mat linear_forward(const Mat& x, const Param& W, const Param* b);
// dy (N, out) → dx (N, in); W.grad += xᵀ dy; b.grad += Σ_rows dy
Mat linear_backward(const Mat& x, const Mat& dy, Param& W, Param* b);

// --- tied output layer: logits = h wteᵀ (+ b), the token table read backwards (GPT-2) ---------------------
// h (N, d), wte (V, d), b (1, V) or null → logits (N, V)
Mat tied_output_forward(const Mat& h, const Param& wte, const Param* b);
// dlogits (N, V) → dh (N, d); wte.grad += dlogitsᵀ h; b.grad += Σ_rows dlogits
Mat tied_output_backward(const Mat& h, const Mat& dlogits, Param& wte, Param* b);

// --- embedding: x[n] = wte[token[n]] + wpe[n mod T] ----------------------------------------------------
// tokens (N = B·T), wte (V, d), wpe (T_max, d) or null → x (N, d)
Mat embedding_forward(const std::vector<int>& tokens, std::size_t T, const Param& wte, const Param* wpe);
void embedding_backward(const std::vector<int>& tokens, std::size_t T, const Mat& dx, Param& wte, Param* wpe);

// --- GELU, exact form: gelu(x) = x Φ(x) = x · ½ (1 + erf(x / √2)) -------------------------------------
// Vectorised through fast/vmath.hpp's erf and exp; the _reference pair is the same formula one element at a
// time over std::erf and std::exp, which the tests hold the fast pair to (within a few float ulps).
Mat gelu_forward(const Mat& x);
Mat gelu_backward(const Mat& x, const Mat& dy);  // dx = dy · (Φ(x) + x φ(x))
// The FFN's hidden layer for training, in one pass over its rows: returns gelu(pre + b) and leaves in `pre`
// the slope gelu'(pre + b) = Φ + x φ, all that the backward needs: the exp the backward would take is taken
// here, and erf once for both. The same floats as linear_forward's bias then gelu_forward, and as
// gelu_backward(pre + b, dy) once gelu_backward_from_slope multiplies dy by the slope.
Mat bias_gelu_forward(Mat& pre, const Param& b);
Mat gelu_backward_from_slope(const Mat& slope, const Mat& dy);  // dx = dy ⊙ slope

// --- residual sum: a += b ---------------------------------------------------------------------------------
// Element by element, vectorised and over the threads: a block's two residual sums and their gradients.
void add_in_place(Mat& a, const Mat& b);

// --- LayerNorm: y = gain ⊙ (x − mean) / sqrt(var + eps) + bias, per row -----------------------------------
// x (N, d), gain and bias (1, d) → y (N, d)
struct LayerNormCache {
    Mat xhat;  // (N, d) the normalised rows
    Vec rstd;  // (N,) 1 / sqrt(var + eps)
};
Mat layernorm_forward(const Mat& x, const Param& gain, const Param& bias, LayerNormCache& cache, float eps = 1e-5f);
// dy (N, d) → dx (N, d); gain.grad += Σ dy ⊙ xhat; bias.grad += Σ dy
Mat layernorm_backward(const Mat& dy, const LayerNormCache& cache, Param& gain, Param& bias);

// --- cross-entropy over a vocabulary ---------------------------------------------------------------------
// logits (N, V), targets (N) with −1 = ignore this row → mean loss over counted rows; probs (N, V) kept
struct CrossEntropy {
    double loss = 0;
    Mat probs;           // softmax of the logits, for the backward
    std::size_t counted = 0;
};
CrossEntropy cross_entropy_forward(const Mat& logits, const std::vector<int>& targets);
// The readout's bias and the loss in one pass over the rows: logits += b (kept: the model's logits), then
// cross_entropy_forward. The same floats as linear_forward's bias and cross_entropy_forward one after the other.
CrossEntropy bias_cross_entropy_forward(Mat& logits, const Param& b, const std::vector<int>& targets);
Mat cross_entropy_backward(const CrossEntropy& ce, const std::vector<int>& targets);  // dlogits = (p − onehot)/counted
// The same, written over the probabilities (a training step's: no second (N, V) buffer). With readout_bias
// (1, V), also adds Σ_rows dlogits to its gradient in the same pass, the bits add_row_sums would give; the
// readout's linear_backward then gets no bias.
Mat cross_entropy_backward(CrossEntropy&& ce, const std::vector<int>& targets, Param* readout_bias = nullptr);

}  // namespace attn::fast
