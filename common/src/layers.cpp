#include "attn/layers.hpp"

#include <cmath>
#include <numbers>

#include "attn/error.hpp"
#include "attn/matmul.hpp"
#include "attn/softmax.hpp"

namespace attn {

namespace {
void add_bias(Mat& y, const Param& b, const char* where) {  // y[i] += b for every row
    require(b.value.shape(1) == y.shape(1), where, "bias " + shape_str(b.value) + " for " + shape_str(y));
    for (std::size_t i = 0; i < y.shape(0); ++i)
        for (std::size_t j = 0; j < y.shape(1); ++j) y(i, j) += b.value(0, j);
}
void add_row_sums(Param& b, const Mat& dy) {  // b.grad += Σ_rows dy
    for (std::size_t i = 0; i < dy.shape(0); ++i)
        for (std::size_t j = 0; j < dy.shape(1); ++j) b.grad(0, j) += dy(i, j);
}
}  // namespace

Mat linear_forward(const Mat& x, const Param& W, const Param* b) {
    require(x.shape(1) == W.value.shape(0), "linear_forward",
            "x " + shape_str(x) + " does not fit " + W.name + " " + shape_str(W.value));
    Mat y = matmul(x, W.value);  // (N, out)
    if (b) add_bias(y, *b, "linear_forward");
    return y;
}

Mat linear_backward(const Mat& x, const Mat& dy, Param& W, Param* b) {
    const int N = static_cast<int>(x.shape(0)), in = static_cast<int>(x.shape(1)), out = static_cast<int>(dy.shape(1));
    require(dy.shape(0) == x.shape(0) && W.value.shape(1) == dy.shape(1), "linear_backward",
            "dy " + shape_str(dy) + " does not fit x " + shape_str(x) + " and " + W.name + " " + shape_str(W.value));
    sgemm(true, false, in, out, N, 1.0f, x.data(), in, dy.data(), out, 1.0f, W.grad.data(), out);  // dW += xᵀ dy
    if (b) add_row_sums(*b, dy);
    return matmul_nt(dy, W.value);  // dx = dy Wᵀ  (N, in)
}

Mat tied_output_forward(const Mat& h, const Param& wte, const Param* b) {
    Mat logits = matmul_nt(h, wte.value);  // (N, d) @ (V, d)ᵀ → (N, V)
    if (b) add_bias(logits, *b, "tied_output_forward");
    return logits;
}

Mat tied_output_backward(const Mat& h, const Mat& dlogits, Param& wte, Param* b) {
    const int N = static_cast<int>(h.shape(0)), V = static_cast<int>(wte.value.shape(0)), d = static_cast<int>(h.shape(1));
    sgemm(true, false, V, d, N, 1.0f, dlogits.data(), V, h.data(), d, 1.0f, wte.grad.data(), d);  // dwte += dlogitsᵀ h
    if (b) add_row_sums(*b, dlogits);
    return matmul(dlogits, wte.value);  // dh = dlogits wte  (N, d)
}

Mat embedding_forward(const std::vector<int>& tokens, std::size_t T, const Param& wte, const Param* wpe) {
    const std::size_t V = wte.value.shape(0), d = wte.value.shape(1);
    require(T > 0 && tokens.size() % T == 0, "embedding_forward",
            std::to_string(tokens.size()) + " tokens are not whole sequences of T = " + std::to_string(T));
    if (wpe) require(wpe->value.shape(0) >= T, "embedding_forward",
                     "T = " + std::to_string(T) + " exceeds the position table " + shape_str(wpe->value));
    Mat x = Mat::from_shape({tokens.size(), d});
    for (std::size_t n = 0; n < tokens.size(); ++n) {
        const int tok = tokens[n];
        if (tok < 0 || static_cast<std::size_t>(tok) >= V)  // checked per token: build the message only on failure
            throw Error("embedding_forward: token " + std::to_string(tok) + " at " + std::to_string(n) +
                        " is outside the vocabulary of " + std::to_string(V));
        for (std::size_t j = 0; j < d; ++j)
            x(n, j) = wte.value(tok, j) + (wpe ? wpe->value(n % T, j) : 0.0f);
    }
    return x;
}

void embedding_backward(const std::vector<int>& tokens, std::size_t T, const Mat& dx, Param& wte, Param* wpe) {
    const std::size_t d = wte.value.shape(1);
    for (std::size_t n = 0; n < tokens.size(); ++n)
        for (std::size_t j = 0; j < d; ++j) {
            wte.grad(tokens[n], j) += dx(n, j);
            if (wpe) wpe->grad(n % T, j) += dx(n, j);
        }
}

Mat gelu_forward(const Mat& x) {
    Mat y = Mat::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float v = x.data()[i];
        y.data()[i] = 0.5f * v * (1.0f + std::erf(v * static_cast<float>(std::numbers::sqrt2 / 2)));
    }
    return y;
}

Mat gelu_tanh_forward(const Mat& x) {
    Mat y = Mat::from_shape(x.shape());
    const float c = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float v = x.data()[i];
        y.data()[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
    }
    return y;
}

Mat gelu_backward(const Mat& x, const Mat& dy) {
    Mat dx = Mat::from_shape(x.shape());
    const float inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float v = x.data()[i];
        const float cdf = 0.5f * (1.0f + std::erf(v * static_cast<float>(std::numbers::sqrt2 / 2)));
        const float pdf = inv_sqrt_2pi * std::exp(-0.5f * v * v);
        dx.data()[i] = dy.data()[i] * (cdf + v * pdf);
    }
    return dx;
}

Mat layernorm_forward(const Mat& x, const Param& gain, const Param& bias, LayerNormCache& cache, float eps) {
    const std::size_t N = x.shape(0), d = x.shape(1);
    require(gain.value.shape(1) == d && bias.value.shape(1) == d, "layernorm_forward",
            "x " + shape_str(x) + " does not fit " + gain.name + " " + shape_str(gain.value));
    cache.xhat = Mat::from_shape({N, d});
    cache.rstd = Vec::from_shape({N});
    Mat y = Mat::from_shape({N, d});
    for (std::size_t i = 0; i < N; ++i) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x(i, j);
        mean /= static_cast<double>(d);
        for (std::size_t j = 0; j < d; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
        var /= static_cast<double>(d);
        const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
        cache.rstd(i) = rstd;
        for (std::size_t j = 0; j < d; ++j) {
            const float xhat = static_cast<float>(x(i, j) - mean) * rstd;
            cache.xhat(i, j) = xhat;
            y(i, j) = gain.value(0, j) * xhat + bias.value(0, j);
        }
    }
    return y;
}

Mat layernorm_backward(const Mat& dy, const LayerNormCache& cache, Param& gain, Param& bias) {
    const std::size_t N = dy.shape(0), d = dy.shape(1);
    Mat dx = Mat::from_shape({N, d});
    for (std::size_t i = 0; i < N; ++i) {
        // dxhat = dy ⊙ gain; dx = rstd · (dxhat − mean(dxhat) − xhat · mean(dxhat ⊙ xhat))
        float mean_d = 0, mean_dx = 0;
        for (std::size_t j = 0; j < d; ++j) {
            const float dxhat = dy(i, j) * gain.value(0, j);
            mean_d += dxhat;
            mean_dx += dxhat * cache.xhat(i, j);
            gain.grad(0, j) += dy(i, j) * cache.xhat(i, j);
            bias.grad(0, j) += dy(i, j);
        }
        mean_d /= static_cast<float>(d);
        mean_dx /= static_cast<float>(d);
        for (std::size_t j = 0; j < d; ++j) {
            const float dxhat = dy(i, j) * gain.value(0, j);
            dx(i, j) = cache.rstd(i) * (dxhat - mean_d - cache.xhat(i, j) * mean_dx);
        }
    }
    return dx;
}

CrossEntropy cross_entropy_forward(const Mat& logits, const std::vector<int>& targets) {
    require(logits.shape(0) == targets.size(), "cross_entropy_forward",
            "logits " + shape_str(logits) + " for " + std::to_string(targets.size()) + " targets");
    CrossEntropy ce;
    ce.probs = softmax_rows(logits);
    const std::size_t V = logits.shape(1);
    for (std::size_t n = 0; n < targets.size(); ++n) {
        if (targets[n] < 0) continue;
        if (static_cast<std::size_t>(targets[n]) >= V)
            throw Error("cross_entropy_forward: target " + std::to_string(targets[n]) + " outside the vocabulary of " +
                        std::to_string(V));
        ce.loss -= std::log(std::max(static_cast<double>(ce.probs(n, targets[n])), 1e-30));
        ++ce.counted;
    }
    require(ce.counted > 0, "cross_entropy_forward", "every target is ignored (−1)");
    ce.loss /= static_cast<double>(ce.counted);
    return ce;
}

Mat cross_entropy_backward(const CrossEntropy& ce, const std::vector<int>& targets) {
    Mat d = ce.probs;
    const float inv = 1.0f / static_cast<float>(ce.counted);
    for (std::size_t n = 0; n < targets.size(); ++n) {
        auto row = xt::row(d, static_cast<std::ptrdiff_t>(n));
        if (targets[n] < 0) {
            row.fill(0.0f);
            continue;
        }
        d(n, targets[n]) -= 1.0f;
        row *= inv;
    }
    return d;
}

}  // namespace attn
