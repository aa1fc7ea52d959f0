// The reference engine's layers: the chapter's model written to be read, one layer at a time.
//
// Every layer is an object with a forward and a backward (minGPT's modules, llm.c's layer pairs):
//   forward(x, T)   x (B·T, d_in) → y (B·T, d_out); keeps what its backward needs. T is the sequence length:
//                   rows are B sequences of T tokens, and only attention looks across rows.
//   backward(dy)    dy (B·T, d_out) → dx (B·T, d_in); *adds* its parameters' gradients into their grad.
// Products are matmul (reference/matmul.hpp: one SGEMM through xtensor-blas; matmul(dy, transposed(W)) for dy · Wᵀ) on 2-D matrices, everything else plain xtensor
// expressions: no threads, no vector code, no fused passes. The fast engine (common/fast) computes the same
// functions faster; tests/common/test_reference.cpp holds the two to each other.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::reference {

class Layer {
public:
    virtual ~Layer() = default;
    virtual Mat forward(const Mat& x, std::size_t T) = 0;  // (B·T, d_in) → (B·T, d_out)
    virtual Mat backward(const Mat& dy) = 0;               // (B·T, d_out) → dx (B·T, d_in)
};

// y = x W + b:  x (N, in), W (in, out) drawn from N(0, std²), b (1, out) starting at 0, or no b when b_name is ""
class Linear : public Layer {
public:
    Linear(Parameters& params, const std::string& W_name, const std::string& b_name, std::size_t in, std::size_t out,
           float std, Rng& rng);
    Mat forward(const Mat& x, std::size_t T) override;
    Mat backward(const Mat& dy) override;  // W.grad += xᵀ dy;  b.grad += Σ_rows dy;  dx = dy Wᵀ

private:
    Param& W_;
    Param* b_;
    Mat x_;  // (N, in)
};

// gelu(x) = x Φ(x) = ½ x (1 + erf(x / √2)), element by element (Mục 9.3's FFN)
class Gelu : public Layer {
public:
    Mat forward(const Mat& x, std::size_t T) override;
    Mat backward(const Mat& dy) override;  // dx = dy ⊙ (Φ(x) + x φ(x))

private:
    Mat x_, cdf_;  // the input, and Φ(x)
};

// The same functions outside a model: gelu(x) is Gelu's forward; gelu_tanh(x) is GPT-2's approximation,
// ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))), which 07_ffn sets beside it.
Mat gelu(const Mat& x);
Mat gelu_tanh(const Mat& x);

// y = gain ⊙ (x − mean) / √(var + eps) + bias, each row on its own (Mục 9.5)
class LayerNorm : public Layer {
public:
    LayerNorm(Parameters& params, const std::string& name, std::size_t d);  // name.gain = 1, name.bias = 0
    Mat forward(const Mat& x, std::size_t T) override;
    Mat backward(const Mat& dy) override;

private:
    Param& gain_;
    Param& bias_;
    Mat xhat_;  // (N, d) the normalised rows
    Mat rstd_;  // (N, 1) 1 / √(var + eps)
};

// f, then g, then …: the backward runs them in reverse
class Sequence : public Layer {
public:
    void add(std::unique_ptr<Layer> layer) { layers_.push_back(std::move(layer)); }
    Mat forward(const Mat& x, std::size_t T) override;
    Mat backward(const Mat& dy) override;

private:
    std::vector<std::unique_ptr<Layer>> layers_;
};

// y = x + f(x): x reaches y twice, so dx = dy + f's backward of dy
class Residual : public Layer {
public:
    explicit Residual(std::unique_ptr<Layer> f) : f_(std::move(f)) {}
    Mat forward(const Mat& x, std::size_t T) override;
    Mat backward(const Mat& dy) override;

private:
    std::unique_ptr<Layer> f_;
};

// The position-wise FFN (Mục 9.3): W_2 gelu(x W_1 + b_1) + b_2, through d_ff hidden units
class FeedForward : public Layer {
public:
    FeedForward(Parameters& params, const std::string& prefix, std::size_t d_model, std::size_t d_ff, Init init, Rng& rng);
    Mat forward(const Mat& x, std::size_t T) override;  // (N, d_model) → (N, d_ff) → (N, d_model)
    Mat backward(const Mat& dy) override;

private:
    Linear up_;
    Gelu gelu_;
    Linear down_;
};

// The readout tied to the token table (GPT-2): logits = h wteᵀ.  h (N, d), wte (V, d) → (N, V)
class TiedReadout : public Layer {
public:
    explicit TiedReadout(Param& wte) : wte_(wte) {}
    Mat forward(const Mat& h, std::size_t T) override;
    Mat backward(const Mat& dlogits) override;  // wte.grad += dlogitsᵀ h;  dh = dlogits wte

private:
    Param& wte_;
    Mat h_;
};

// Softmax over the vocabulary, then the mean negative log-likelihood of the targets (−1: row not scored)
class CrossEntropy {
public:
    double forward(const Mat& logits, const std::vector<int>& targets);  // logits (N, V) → mean loss
    Mat backward() const;  // dlogits (N, V) = (softmax − onehot(target)) / counted rows

private:
    Mat probs_;  // (N, V)
    std::vector<int> targets_;
    std::size_t counted_ = 0;
};

}  // namespace attn::reference
