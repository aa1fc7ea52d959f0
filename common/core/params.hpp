// Parameters and their gradients, the bookkeeping a model needs (llm.c keeps them in flat buffers;
// here each is a named matrix). A layer's backward *accumulates* into grad, so a model zeroes the
// gradients once per step and every use of a shared weight (a tied embedding) adds its share.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn {

struct Param {
    std::string name;
    Mat value;            // (rows, cols); a bias is (1, n)
    Mat grad;             // same shape, accumulated by backward passes
    bool decay = true;    // AdamW weight decay applies to matrices, not to biases or gains
};

class Parameters {
public:
    // Adds a parameter and returns a reference that stays valid as more are added.
    Param& add(std::string name, Mat init, bool decay = true);
    Param& normal(std::string name, std::size_t rows, std::size_t cols, float std, Rng& rng);  // N(0, std²)
    Param& zeros(std::string name, std::size_t rows, std::size_t cols, bool decay = false);
    Param& ones(std::string name, std::size_t rows, std::size_t cols);                         // e.g. a LayerNorm gain

    // From now on, normal, zeros and ones allocate each parameter, value and gradient, at its shape and write
    // nothing into it: no normal drawn, no zeros or ones (add's gradient is left unwritten too). For a model built
    // only to be counted (GPT-2 small's 124 M parameters, 10_block): its pages are never touched, so it costs
    // neither the draws nor the memory. Such parameters hold garbage; a model built on them must never run
    // (reference::Model, AdamW and copy_weights refuse them).
    void shapes_only() { shapes_only_ = true; }
    bool is_shapes_only() const { return shapes_only_; }

    void zero_grad();
    std::size_t count() const;  // total number of scalars
    // Scalars in the parameters with these names, e.g. {"W_q", "W_k", "W_v", "W_o"}.
    std::size_t count(const std::vector<std::string>& names) const;
    std::deque<Param>& all() { return params_; }
    const std::deque<Param>& all() const { return params_; }
    Param& operator[](const std::string& name);

private:
    // A matrix of `value`, or, after shapes_only(), one allocated at `shape` and left unwritten.
    Mat filled(std::vector<std::size_t> shape, float value) const;

    std::deque<Param> params_;  // a deque never moves its elements, so references stay valid
    bool shapes_only_ = false;
};

}  // namespace attn
