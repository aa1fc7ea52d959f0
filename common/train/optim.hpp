// AdamW (Loshchilov & Hutter): Adam's moment estimates with decoupled weight decay, and an optional
// linear warmup of the learning rate over the first steps. Deterministic: no randomness at all.
#pragma once

#include <vector>

#include "core/params.hpp"

namespace attn {

struct AdamWConfig {
    float lr = 1e-3f;
    float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
    float weight_decay = 0.01f;  // applied to parameters with decay = true (matrices), not to biases
    int warmup_steps = 0;        // lr rises linearly from lr/warmup to lr over these steps, then stays
};

class AdamW {
public:
    AdamW(Parameters& params, AdamWConfig config);
    void step();                    // one update from the gradients in params
    float lr_at(int step) const;    // the scheduled learning rate at step (1-based)
    int steps_taken() const { return t_; }
    const AdamWConfig& config() const { return c_; }
    // One step's numbers: its count t (1-based), the scheduled lr and the bias corrections 1 − β1^t, 1 − β2^t.
    struct StepScalars {
        int t = 0;
        float lr = 0, bc1 = 0, bc2 = 0;
    };
    // Counts a step and returns its numbers: step() uses it, and so does an optimizer that runs elsewhere (the
    // GPU model's AdamW kernel), so that the arithmetic is written once.
    StepScalars count_step();
    // The moments, one per parameter in params.all()'s order, for a checkpoint (train/checkpoint.hpp).
    const std::vector<Mat>& first_moments() const { return m_; }
    const std::vector<Mat>& second_moments() const { return v_; }
    // Continues after `steps` steps with these moments; throws attn::Error when a shape does not match.
    void restore(int steps, std::vector<Mat> m, std::vector<Mat> v);

private:
    Parameters& params_;
    AdamWConfig c_;
    std::vector<Mat> m_, v_;
    int t_ = 0;
};

}  // namespace attn
