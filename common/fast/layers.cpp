#include "fast/layers.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "core/error.hpp"
#include "fast/matmul.hpp"
#include "fast/vmath.hpp"
#include "parallel.hpp"

namespace attn::fast {

namespace {
// Raw pointers, not y(i, j): xtensor's checked-free indexing still recomputes strides per element, and with a
// vocabulary of 1024 the readout's bias touches B·T·V entries a step. These loops vectorise.
// y[i] += b for every row i, then then(i, row) while the row is still in cache: the rows split between threads
template <class Then>
void add_bias_rows(Mat& y, const Param& b, const char* where, Then&& then) {
    require(b.value.shape(1) == y.shape(1), where, "bias " + shape_str(b.value) + " for " + shape_str(y));
    const std::size_t cols = y.shape(1);
    const float* bias = b.value.data();
    parallel_ranges(y.shape(0), cols, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
            float* row = y.data() + i * cols;
            for (std::size_t j = 0; j < cols; ++j) row[j] += bias[j];
            then(i, row);
        }
    });
}
void add_bias(Mat& y, const Param& b, const char* where) {
    add_bias_rows(y, b, where, [](std::size_t, float*) {});
}
// grad[j] += Σ_rows a[i][j] (· c[i][j] when c is given), for columns [lo, hi), row after row: each column's
// sum in the same order on any number of threads.
void add_column_sums(float* grad, const float* a, const float* c, std::size_t rows, std::size_t cols, std::size_t lo,
                     std::size_t hi) {
    for (std::size_t i = 0; i < rows; ++i) {
        const float* ai = a + i * cols;
        if (c) {
            const float* ci = c + i * cols;
            for (std::size_t j = lo; j < hi; ++j) grad[j] += ai[j] * ci[j];
        } else {
            for (std::size_t j = lo; j < hi; ++j) grad[j] += ai[j];
        }
    }
}
void add_row_sums(Param& b, const Mat& dy) {  // b.grad += Σ_rows dy, row after row, the columns split between threads
    const std::size_t rows = dy.shape(0), cols = dy.shape(1);
    parallel_ranges(cols, rows, [&](std::size_t lo, std::size_t hi) { add_column_sums(b.grad.data(), dy.data(), nullptr, rows, cols, lo, hi); });
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
    sgemm(Op::transposed, Op::as_is, in, out, N, 1.0f, x.data(), in, dy.data(), out, 1.0f, W.grad.data(), out);  // dW += xᵀ dy
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
    sgemm(Op::transposed, Op::as_is, V, d, N, 1.0f, dlogits.data(), V, h.data(), d, 1.0f, wte.grad.data(), d);  // dwte += dlogitsᵀ h
    if (b) add_row_sums(*b, dlogits);
    return matmul(dlogits, wte.value);  // dh = dlogits wte  (N, d)
}

Mat embedding_forward(const std::vector<int>& tokens, std::size_t T, const Param& wte, const Param* wpe) {
    const std::size_t V = wte.value.shape(0), d = wte.value.shape(1);
    require(T > 0 && tokens.size() % T == 0, "embedding_forward",
            std::to_string(tokens.size()) + " tokens are not whole sequences of T = " + std::to_string(T));
    if (wpe) require(wpe->value.shape(0) >= T, "embedding_forward",
                     "T = " + std::to_string(T) + " exceeds the position table " + shape_str(wpe->value));
    for (std::size_t n = 0; n < tokens.size(); ++n) {
        const int tok = tokens[n];
        if (tok < 0 || static_cast<std::size_t>(tok) >= V)  // checked per token: build the message only on failure
            throw Error("embedding_forward: token " + std::to_string(tok) + " at " + std::to_string(n) +
                        " is outside the vocabulary of " + std::to_string(V));
    }
    Mat x = Mat::from_shape({tokens.size(), d});
    parallel_ranges(tokens.size(), d, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t n = lo; n < hi; ++n) {
            const float* e = wte.value.data() + static_cast<std::size_t>(tokens[n]) * d;
            const float* pos = wpe ? wpe->value.data() + (n % T) * d : nullptr;
            float* xn = x.data() + n * d;
            for (std::size_t j = 0; j < d; ++j) xn[j] = e[j] + (pos ? pos[j] : 0.0f);
        }
    });
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

// The exact GELU in loops over erf_rational and exp_poly (fast/vmath.hpp) that GCC vectorises (the tests hold
// them to plain loops over libm's erf and exp, spec::gelu). target_clones compiles each fast loop for AVX-512,
// AVX2 and the baseline x86-64 (ATTN_CLONES), and picks one when the program starts: the build stays
// portable. The clones compute the same operations in the same order (no FMA contraction), so a machine's
// results do not depend on which runs.
namespace {
constexpr float inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
constexpr float inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);

ATTN_CLONES void gelu_kernel(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + erf_rational(x[i] * inv_sqrt2));
}

// dx = dy · (Φ(x) + x φ(x))
ATTN_CLONES void gelu_backward_kernel(const float* x, const float* dy, float* dx, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        const float cdf = 0.5f * (1.0f + erf_rational(v * inv_sqrt2));
        const float pdf = inv_sqrt_2pi * exp_poly(-0.5f * v * v);
        dx[i] = dy[i] * (cdf + v * pdf);
    }
}

// y = gelu(x), and x overwritten by the slope gelu'(x) = Φ(x) + x φ(x): the floats of gelu_kernel and of
// gelu_backward_kernel's (cdf + v · pdf), with erf taken once for both
ATTN_CLONES void gelu_slope_kernel(float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        const float one_plus_erf = 1.0f + erf_rational(v * inv_sqrt2);
        y[i] = 0.5f * v * one_plus_erf;
        const float pdf = inv_sqrt_2pi * exp_poly(-0.5f * v * v);
        x[i] = 0.5f * one_plus_erf + v * pdf;
    }
}

ATTN_CLONES void times_kernel(const float* a, const float* b, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

ATTN_CLONES void plus_kernel(float* a, const float* b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) a[i] += b[i];
}
}  // namespace

// Stretches of this many elements are the threads' items (a multiple of the vector width).
constexpr std::size_t kStretch = 4096;

// body(at, count) for the stretches [at, at + count) that cover [0, n), split between the threads: for the
// element-wise loops, where any split gives the same bits
template <class Body>
void over_stretches(std::size_t n, Body&& body) {
    parallel_ranges((n + kStretch - 1) / kStretch, kStretch, [&](std::size_t lo, std::size_t hi) {
        body(lo * kStretch, std::min(n, hi * kStretch) - lo * kStretch);
    });
}

Mat gelu_forward(const Mat& x) {
    Mat y = Mat::from_shape(x.shape());
    over_stretches(x.size(), [&](std::size_t at, std::size_t count) { gelu_kernel(x.data() + at, y.data() + at, count); });
    return y;
}

Mat bias_gelu_forward(Mat& pre, const Param& b) {
    const std::size_t cols = pre.shape(1);
    Mat y = Mat::from_shape(pre.shape());
    add_bias_rows(pre, b, "bias_gelu_forward", [&](std::size_t i, float* row) {
        gelu_slope_kernel(row, y.data() + i * cols, cols);  // the row becomes the slope
    });
    return y;
}

void add_in_place(Mat& a, const Mat& b) {
    require(a.shape() == b.shape(), "add_in_place", shape_str(b) + " added to " + shape_str(a));
    over_stretches(a.size(), [&](std::size_t at, std::size_t count) { plus_kernel(a.data() + at, b.data() + at, count); });
}

Mat gelu_backward_from_slope(const Mat& slope, const Mat& dy) {
    require(dy.shape() == slope.shape(), "gelu_backward_from_slope", "dy " + shape_str(dy) + " for the slope " + shape_str(slope));
    Mat dx = Mat::from_shape(dy.shape());
    over_stretches(dy.size(), [&](std::size_t at, std::size_t count) {
        times_kernel(dy.data() + at, slope.data() + at, dx.data() + at, count);
    });
    return dx;
}

Mat gelu_backward(const Mat& x, const Mat& dy) {
    require(dy.shape() == x.shape(), "gelu_backward", "dy " + shape_str(dy) + " for x " + shape_str(x));
    Mat dx = Mat::from_shape(x.shape());
    over_stretches(x.size(), [&](std::size_t at, std::size_t count) {
        gelu_backward_kernel(x.data() + at, dy.data() + at, dx.data() + at, count);
    });
    return dx;
}

// LayerNorm over raw row pointers (the same arithmetic as indexing x(i, j), without xtensor's per-element
// stride arithmetic). The cache keeps its buffers from step to step: resize() to an unchanged shape allocates
// nothing.
namespace {
// LayerNorm's per-row sums are chains of dependent adds, one element after another (the order fixes the
// bits). One row alone waits on every add's latency; R rows at a time run R independent chains side by side,
// each still in column order, so each row gets the same bits as alone and the CPU overlaps the waits.
constexpr std::size_t kRowGroup = 8;

// Rows [0, R) of x: xhat, y and rstd as one row alone would give them.
template <std::size_t R>
void layernorm_rows(const float* x, std::size_t d, const float* g, const float* b, float eps, float* xhat, float* y,
                    float* rstd) {
    double mean[R] = {}, var[R] = {};
    for (std::size_t j = 0; j < d; ++j)
        for (std::size_t r = 0; r < R; ++r) mean[r] += x[r * d + j];
    for (std::size_t r = 0; r < R; ++r) mean[r] /= static_cast<double>(d);
    for (std::size_t j = 0; j < d; ++j)
        for (std::size_t r = 0; r < R; ++r) {
            const double c = x[r * d + j] - mean[r];
            var[r] += c * c;
        }
    for (std::size_t r = 0; r < R; ++r) {
        const float s = static_cast<float>(1.0 / std::sqrt(var[r] / static_cast<double>(d) + eps));
        rstd[r] = s;
        const float* xr = x + r * d;
        float *hr = xhat + r * d, *yr = y + r * d;
        for (std::size_t j = 0; j < d; ++j) {
            hr[j] = static_cast<float>(xr[j] - mean[r]) * s;
            yr[j] = g[j] * hr[j] + b[j];
        }
    }
}

// dx for rows [0, R): dxhat = dy ⊙ gain; dx = rstd · (dxhat − mean(dxhat) − xhat · mean(dxhat ⊙ xhat)), each
// row's two means one chain of float adds in column order, R rows side by side as in layernorm_rows.
// f(R, i) over rows [lo, hi): groups of kRowGroup rows from row i, then the last rows one by one (R is a
// std::integral_constant: layernorm_rows<decltype(R)::value>)
template <class F>
void by_row_groups(std::size_t lo, std::size_t hi, F&& f) {
    std::size_t i = lo;
    for (; i + kRowGroup <= hi; i += kRowGroup) f(std::integral_constant<std::size_t, kRowGroup>{}, i);
    for (; i < hi; ++i) f(std::integral_constant<std::size_t, 1>{}, i);
}

template <std::size_t R>
void layernorm_rows_backward(const float* dy, const float* xhat, const float* rstd, const float* g, std::size_t d,
                             float* dx) {
    float mean_d[R] = {}, mean_dx[R] = {};
    for (std::size_t j = 0; j < d; ++j)
        for (std::size_t r = 0; r < R; ++r) {
            const float dxhat = dy[r * d + j] * g[j];
            mean_d[r] += dxhat;
            mean_dx[r] += dxhat * xhat[r * d + j];
        }
    for (std::size_t r = 0; r < R; ++r) {
        const float md = mean_d[r] / static_cast<float>(d), mdx = mean_dx[r] / static_cast<float>(d);
        const float *dyr = dy + r * d, *hr = xhat + r * d;
        float* dxr = dx + r * d;
        for (std::size_t j = 0; j < d; ++j) dxr[j] = rstd[r] * (dyr[j] * g[j] - md - hr[j] * mdx);
    }
}
}  // namespace

Mat layernorm_forward(const Mat& x, const Param& gain, const Param& bias, LayerNormCache& cache, float eps) {
    const std::size_t N = x.shape(0), d = x.shape(1);
    require(gain.value.shape(1) == d && bias.value.shape(1) == d, "layernorm_forward",
            "x " + shape_str(x) + " does not fit " + gain.name + " " + shape_str(gain.value));
    cache.xhat.resize({N, d});
    cache.rstd.resize({N});
    Mat y = Mat::from_shape({N, d});
    const float *g = gain.value.data(), *b = bias.value.data();
    parallel_ranges(N, d, [&](std::size_t lo, std::size_t hi) {
        by_row_groups(lo, hi, [&](auto R, std::size_t i) {
            layernorm_rows<decltype(R)::value>(x.data() + i * d, d, g, b, eps, cache.xhat.data() + i * d, y.data() + i * d,
                                               cache.rstd.data() + i);
        });
    });
    return y;
}

Mat layernorm_backward(const Mat& dy, const LayerNormCache& cache, Param& gain, Param& bias) {
    const std::size_t N = dy.shape(0), d = dy.shape(1);
    Mat dx = Mat::from_shape({N, d});
    const float* g = gain.value.data();
    parallel_ranges(N, d, [&](std::size_t lo, std::size_t hi) {
        by_row_groups(lo, hi, [&](auto R, std::size_t i) {
            layernorm_rows_backward<decltype(R)::value>(dy.data() + i * d, cache.xhat.data() + i * d, cache.rstd.data() + i, g,
                                                        d, dx.data() + i * d);
        });
    });
    // gain.grad += Σ_rows dy ⊙ xhat, bias.grad += Σ_rows dy: sums over rows, so the threads split the columns
    parallel_ranges(d, 2 * N, [&](std::size_t lo, std::size_t hi) {
        add_column_sums(gain.grad.data(), dy.data(), cache.xhat.data(), N, d, lo, hi);
        add_column_sums(bias.grad.data(), dy.data(), nullptr, N, d, lo, hi);
    });
    return dx;
}

namespace {
// softmax of one row of logits, as softmax_rows computes it but vectorised (fast/vmath.hpp): with a vocabulary
// of 1024 the readout's softmax is B·T·V exponentials a step, too many for std::exp one at a time, and its
// max and sum too long for one chain of dependent operations.
ATTN_CLONES void softmax_row_fast(const float* z, float* p, std::size_t V) {
    const float m = row_max(z, V);
    for (std::size_t j = 0; j < V; ++j) p[j] = exp_poly(z[j] - m);
    const float inv = 1.0f / row_sum(p, V);
    for (std::size_t j = 0; j < V; ++j) p[j] *= inv;
}

// The mean loss over the counted rows, from the probabilities already in ce.probs; checks the targets.
void score_targets(CrossEntropy& ce, const std::vector<int>& targets) {
    const std::size_t V = ce.probs.shape(1);
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
}
}  // namespace

CrossEntropy cross_entropy_forward(const Mat& logits, const std::vector<int>& targets) {
    require(logits.shape(0) == targets.size(), "cross_entropy_forward",
            "logits " + shape_str(logits) + " for " + std::to_string(targets.size()) + " targets");
    CrossEntropy ce;
    const std::size_t V = logits.shape(1);
    ce.probs = Mat::from_shape(logits.shape());
    parallel_ranges(logits.shape(0), V, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t n = lo; n < hi; ++n) softmax_row_fast(logits.data() + n * V, ce.probs.data() + n * V, V);
    });
    score_targets(ce, targets);
    return ce;
}

CrossEntropy bias_cross_entropy_forward(Mat& logits, const Param& b, const std::vector<int>& targets) {
    require(logits.shape(0) == targets.size(), "bias_cross_entropy_forward",
            "logits " + shape_str(logits) + " for " + std::to_string(targets.size()) + " targets");
    CrossEntropy ce;
    const std::size_t V = logits.shape(1);
    ce.probs = Mat::from_shape(logits.shape());
    add_bias_rows(logits, b, "bias_cross_entropy_forward",
                  [&](std::size_t n, float* row) { softmax_row_fast(row, ce.probs.data() + n * V, V); });
    score_targets(ce, targets);
    return ce;
}

namespace {
// d holds the probabilities; turns each row into (p − onehot) / counted, or 0 for an ignored row, and with
// bias_grad adds each column's sum over the rows to it in the same pass (the readout bias's gradient, which
// would otherwise read the (N, V) result once more). The threads split the columns, so every column is summed
// over the rows in row order on any number of threads.
Mat to_dlogits(Mat d, const std::vector<int>& targets, std::size_t counted, float* bias_grad) {
    const std::size_t N = targets.size(), V = d.shape(1);
    const float inv = 1.0f / static_cast<float>(counted);
    parallel_ranges(V, N, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t n = 0; n < N; ++n) {
            float* row = d.data() + n * V;
            if (targets[n] < 0) {
                std::fill(row + lo, row + hi, 0.0f);
            } else {
                const auto t = static_cast<std::size_t>(targets[n]);
                if (t >= lo && t < hi) row[t] -= 1.0f;
                for (std::size_t j = lo; j < hi; ++j) row[j] *= inv;
            }
            if (bias_grad)
                for (std::size_t j = lo; j < hi; ++j) bias_grad[j] += row[j];
        }
    });
    return d;
}
}  // namespace

Mat cross_entropy_backward(const CrossEntropy& ce, const std::vector<int>& targets) {
    return to_dlogits(ce.probs, targets, ce.counted, nullptr);
}

Mat cross_entropy_backward(CrossEntropy&& ce, const std::vector<int>& targets, Param* readout_bias) {
    if (readout_bias)
        require(readout_bias->grad.shape(1) == ce.probs.shape(1), "cross_entropy_backward",
                "readout bias " + shape_str(readout_bias->grad) + " for logits " + shape_str(ce.probs));
    return to_dlogits(std::move(ce.probs), targets, ce.counted, readout_bias ? readout_bias->grad.data() : nullptr);
}

}  // namespace attn::fast
