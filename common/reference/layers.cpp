#include "reference/layers.hpp"

#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "math/softmax.hpp"
#include "reference/matmul.hpp"

namespace attn::reference {

// --- Linear ---------------------------------------------------------------------------------------------------

Linear::Linear(Parameters& params, const std::string& W_name, const std::string& b_name, std::size_t in, std::size_t out,
               float std, Rng& rng)
    : W_(params.normal(W_name, in, out, std, rng)), b_(b_name.empty() ? nullptr : &params.zeros(b_name, 1, out)) {}

Mat Linear::forward(const Mat& x, std::size_t) {
    require(x.shape(1) == W_.value.shape(0), "Linear::forward", "x " + shape_str(x) + " does not fit " + W_.name + " " + shape_str(W_.value));
    x_ = x;
    Mat y = matmul(x, W_.value);  // (N, out)
    if (b_)                                // (1, out), the same for every row
        for (std::size_t i = 0; i < y.shape(0); ++i)
            for (std::size_t j = 0; j < y.shape(1); ++j) y(i, j) += b_->value(0, j);
    return y;
}

Mat Linear::backward(const Mat& dy) {
    W_.grad += matmul(transposed(x_), dy);  // (in, out)
    if (b_)  // each row added b: its gradient is the sum of the rows of dy
        for (std::size_t i = 0; i < dy.shape(0); ++i)
            for (std::size_t j = 0; j < dy.shape(1); ++j) b_->grad(0, j) += dy(i, j);
    return matmul(dy, transposed(W_.value));  // (N, in)
}

// --- GELU -----------------------------------------------------------------------------------------------------

namespace {
const float inv_sqrt2 = static_cast<float>(1.0 / std::numbers::sqrt2);
const float inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
}  // namespace

Mat Gelu::forward(const Mat& x, std::size_t) {
    x_ = x;
    cdf_ = 0.5f * (1.0f + xt::erf(x * inv_sqrt2));  // Φ(x), kept for the backward
    return x * cdf_;
}

Mat Gelu::backward(const Mat& dy) {
    const Mat pdf = inv_sqrt_2pi * xt::exp(-0.5f * x_ * x_);  // φ(x)
    return dy * (cdf_ + x_ * pdf);
}

Mat gelu(const Mat& x) { return Gelu().forward(x, 1); }

Mat gelu_tanh(const Mat& x) {
    const float c = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    return 0.5f * x * (1.0f + xt::tanh(c * (x + 0.044715f * x * x * x)));
}

// --- LayerNorm ------------------------------------------------------------------------------------------------

LayerNorm::LayerNorm(Parameters& params, const std::string& name, std::size_t d)
    : gain_(params.ones(name + ".gain", 1, d)), bias_(params.zeros(name + ".bias", 1, d)) {}

Mat LayerNorm::forward(const Mat& x, std::size_t) {
    const std::size_t N = x.shape(0), d = x.shape(1);
    require(d == gain_.value.shape(1), "LayerNorm::forward", "x " + shape_str(x) + " does not fit " + gain_.name + " " + shape_str(gain_.value));
    const float eps = 1e-5f;
    xhat_ = Mat::from_shape({N, d});
    rstd_ = Mat::from_shape({N, 1});
    Mat y = Mat::from_shape({N, d});
    for (std::size_t i = 0; i < N; ++i) {  // each row on its own
        float mean = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x(i, j);
        mean /= static_cast<float>(d);
        float var = 0;  // divided by d, not d − 1
        for (std::size_t j = 0; j < d; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
        var /= static_cast<float>(d);
        rstd_(i, 0) = 1.0f / std::sqrt(var + eps);
        for (std::size_t j = 0; j < d; ++j) {
            xhat_(i, j) = (x(i, j) - mean) * rstd_(i, 0);
            y(i, j) = gain_.value(0, j) * xhat_(i, j) + bias_.value(0, j);
        }
    }
    return y;
}

Mat LayerNorm::backward(const Mat& dy) {
    const std::size_t N = dy.shape(0), d = dy.shape(1);
    Mat dx = Mat::from_shape({N, d});
    for (std::size_t i = 0; i < N; ++i) {
        // xhat depends on every x of its row through the mean and the variance: two sums per row
        float mean_dxhat = 0, mean_dxhat_xhat = 0;
        for (std::size_t j = 0; j < d; ++j) {
            const float dxhat = dy(i, j) * gain_.value(0, j);
            mean_dxhat += dxhat;
            mean_dxhat_xhat += dxhat * xhat_(i, j);
            gain_.grad(0, j) += dy(i, j) * xhat_(i, j);
            bias_.grad(0, j) += dy(i, j);
        }
        mean_dxhat /= static_cast<float>(d);
        mean_dxhat_xhat /= static_cast<float>(d);
        for (std::size_t j = 0; j < d; ++j)
            dx(i, j) = rstd_(i, 0) * (dy(i, j) * gain_.value(0, j) - mean_dxhat - xhat_(i, j) * mean_dxhat_xhat);
    }
    return dx;
}

// --- Sequence and Residual ------------------------------------------------------------------------------------

Mat Sequence::forward(const Mat& x, std::size_t T) {
    Mat y = x;
    for (auto& layer : layers_) y = layer->forward(y, T);
    return y;
}

Mat Sequence::backward(const Mat& dy) {
    Mat dx = dy;
    for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) dx = (*layer)->backward(dx);
    return dx;
}

Mat Residual::forward(const Mat& x, std::size_t T) { return x + f_->forward(x, T); }

Mat Residual::backward(const Mat& dy) { return dy + f_->backward(dy); }

// --- FeedForward ----------------------------------------------------------------------------------------------

FeedForward::FeedForward(Parameters& params, const std::string& prefix, std::size_t d_model, std::size_t d_ff, Init init, Rng& rng)
    : up_(params, prefix + "W_1", prefix + "b_1", d_model, d_ff, init_std(init, d_model), rng),
      down_(params, prefix + "W_2", prefix + "b_2", d_ff, d_model, init_std(init, d_ff), rng) {}

Mat FeedForward::forward(const Mat& x, std::size_t T) { return down_.forward(gelu_.forward(up_.forward(x, T), T), T); }

Mat FeedForward::backward(const Mat& dy) { return up_.backward(gelu_.backward(down_.backward(dy))); }

// --- the tied readout -----------------------------------------------------------------------------------------

Mat TiedReadout::forward(const Mat& h, std::size_t) {
    h_ = h;
    return matmul(h, transposed(wte_.value));  // (N, V)
}

Mat TiedReadout::backward(const Mat& dlogits) {
    wte_.grad += matmul(transposed(dlogits), h_);  // (V, d)
    return matmul(dlogits, wte_.value);               // (N, d)
}

// --- cross-entropy --------------------------------------------------------------------------------------------

double CrossEntropy::forward(const Mat& logits, const std::vector<int>& targets) {
    const std::size_t V = logits.shape(1);
    require(logits.shape(0) == targets.size(), "CrossEntropy::forward", "logits " + shape_str(logits) + " for " + std::to_string(targets.size()) + " targets");
    probs_ = softmax_rows(logits);  // (N, V)
    targets_ = targets;
    counted_ = 0;
    double loss = 0;
    for (std::size_t n = 0; n < targets.size(); ++n) {
        if (targets[n] < 0) continue;  // not scored
        if (static_cast<std::size_t>(targets[n]) >= V)  // (the message built only then: this runs for every token of every step)
            throw Error("CrossEntropy::forward: target " + std::to_string(targets[n]) + " outside the vocabulary of " + std::to_string(V));
        loss -= std::log(std::max(static_cast<double>(probs_(n, targets[n])), 1e-30));
        ++counted_;
    }
    require(counted_ > 0, "CrossEntropy::forward", "every target is ignored (−1)");
    return loss / static_cast<double>(counted_);
}

Mat CrossEntropy::backward() const {
    Mat dlogits = probs_;
    for (std::size_t n = 0; n < targets_.size(); ++n) {
        if (targets_[n] < 0) xt::row(dlogits, n) = 0.0f;  // a row not scored gives no gradient
        else dlogits(n, targets_[n]) -= 1.0f;
    }
    return dlogits / static_cast<float>(counted_);
}

}  // namespace attn::reference
