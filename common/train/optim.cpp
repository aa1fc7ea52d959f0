#include "train/optim.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "fast/parallel.hpp"
#include "fast/vmath.hpp"

namespace attn {

namespace {
struct UpdateScalars {
    float beta1, beta2, bc1, bc2, lr, eps, decay;
};

// AdamW on n weights, each on its own (any split over threads gives the same bits). The scalars come by
// value, not through the optimiser: a write to m[i] could otherwise be a write to beta1 as far as the compiler
// knows, and the loop would not vectorise.
ATTN_CLONES void adamw_update(float* w, const float* g, float* m, float* v, std::size_t n, const UpdateScalars k) {
    for (std::size_t i = 0; i < n; ++i) {
        m[i] = k.beta1 * m[i] + (1.0f - k.beta1) * g[i];
        v[i] = k.beta2 * v[i] + (1.0f - k.beta2) * g[i] * g[i];
        const float mhat = m[i] / k.bc1, vhat = v[i] / k.bc2;
        w[i] -= k.lr * (mhat / (std::sqrt(vhat) + k.eps) + k.decay * w[i]);
    }
}
}  // namespace

AdamW::AdamW(Parameters& params, AdamWConfig config) : params_(params), c_(config) {
    require(!params.is_shapes_only(), "AdamW", "these parameters were made by Parameters::shapes_only: they hold no weights to train");
    for (const auto& p : params_.all()) {
        m_.push_back(xt::zeros<float>(p.value.shape()));
        v_.push_back(xt::zeros<float>(p.value.shape()));
    }
}

void AdamW::restore(int steps, std::vector<Mat> m, std::vector<Mat> v) {
    require(steps >= 0 && m.size() == m_.size() && v.size() == v_.size(), "AdamW::restore",
            std::to_string(m.size()) + " and " + std::to_string(v.size()) + " moments for " + std::to_string(m_.size()) + " parameters");
    for (std::size_t k = 0; k < m_.size(); ++k)
        require(m[k].shape() == m_[k].shape() && v[k].shape() == v_[k].shape(), "AdamW::restore",
                "moment " + std::to_string(k) + " has shape " + shape_str(m[k]) + ", the parameter " + shape_str(m_[k]));
    m_ = std::move(m), v_ = std::move(v), t_ = steps;
}

float AdamW::lr_at(int step) const {
    if (c_.warmup_steps > 0 && step <= c_.warmup_steps) return c_.lr * static_cast<float>(step) / c_.warmup_steps;
    return c_.lr;
}

AdamW::StepScalars AdamW::count_step() {
    ++t_;
    return {.t = t_, .lr = lr_at(t_), .bc1 = 1.0f - std::pow(c_.beta1, static_cast<float>(t_)),
            .bc2 = 1.0f - std::pow(c_.beta2, static_cast<float>(t_))};
}

void AdamW::step() {
    const StepScalars s = count_step();
    std::size_t k = 0;
    for (auto& p : params_.all()) {
        float* w = p.value.data();
        const float* g = p.grad.data();
        float* m = m_[k].data();
        float* v = v_[k].data();
        const UpdateScalars scalars{.beta1 = c_.beta1, .beta2 = c_.beta2, .bc1 = s.bc1, .bc2 = s.bc2, .lr = s.lr, .eps = c_.eps,
                                    .decay = p.decay ? c_.weight_decay : 0.0f};
        fast::parallel_ranges(p.value.size(), 4, [&](std::size_t lo, std::size_t hi) {
            adamw_update(w + lo, g + lo, m + lo, v + lo, hi - lo, scalars);
        });
        ++k;
    }
}

}  // namespace attn
