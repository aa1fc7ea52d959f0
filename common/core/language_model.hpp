// What the training loop needs from a model, and nothing more: a next-token forward that returns the
// mean cross-entropy, the backward of that loss into params(), and the last logits. Both engines' models
// are one (reference::Model, reference/model.hpp; fast::Model, fast/model.hpp); the loop (train/train.hpp)
// trains anything that is, e.g. a model on the GPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/tensor.hpp"

namespace attn {

class AdamW;

class LanguageModel {
public:
    virtual ~LanguageModel() = default;
    // tokens and targets: B·T each (target −1 = not scored) → mean cross-entropy over scored rows
    virtual double forward(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t B,
                           std::size_t T) = 0;
    virtual void backward() = 0;  // gradients of the last forward's loss, accumulated into params()
    virtual Parameters& params() = 0;
    virtual const Mat& logits() const = 0;  // (B·T, V) of the last forward
    // The configuration in words: a checkpoint records it, and a resume into another model is refused.
    virtual std::string describe() const { return {}; }

    // One training step's bookkeeping (attn::train_loop). The defaults are a host model's: zero params()'s
    // gradients; clip their global norm to `clip` (0: no clip) and take one AdamW step. A device model
    // (attn::gpu::GpuModel) keeps its weights, gradients and AdamW's moments on the device: it overrides these,
    // and mirrors its state into params() and opt when a checkpoint or a reader needs them (sync_to_host), or
    // back after a checkpoint was loaded into them (sync_from_host). opt may be null: the weights alone.
    virtual void zero_grad() { params().zero_grad(); }
    virtual void update(AdamW& opt, double clip);
    virtual void sync_to_host(AdamW* /*opt*/) {}
    virtual void sync_from_host(const AdamW* /*opt*/) {}
    // Returns when the device has finished what was asked of it (a host model's calls return finished): what a
    // benchmark waits on before it reads the clock.
    virtual void wait() {}
};

}  // namespace attn
