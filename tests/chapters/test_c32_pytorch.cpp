// Claim C32 — our multi-head attention and Transformer block against a reference implementation
// (PyTorch) with the same weights: the largest absolute difference is ~1e-7 in fp32.
//
// The reference outputs are committed .npy files in tests/golden/, written by tools/make_goldens.py
// (torch version, seed and the meaning of each file in tests/golden/VERSION.txt); torch is not needed
// here. PyTorch's weights are (out, in) with y = x Wᵀ + b; ours are (in, out) with y = x W + b, so each
// is transposed, and nn.MultiheadAttention's in_proj_weight (3d, d) is split into W_q, W_k, W_v.
//
// Tolerances: every tensor must satisfy |ours − torch| ≤ atol + rtol·|torch| entry by entry. Both
// sides compute in fp32 (unit roundoff u = 2^-24 ≈ 6e-8) but sum in different orders (OpenBLAS's SGEMM
// against ATen's CPU kernels; our LayerNorm's statistics in double, torch's in fp32), so outputs of
// size up to ~4 differ by an ulp or two. Measured (torch 1.13, OpenBLAS, g++ 12): attention weights
// 1.2e-7; attention outputs 4.8e-7 causal (|out| ≤ 4.07, 1 ulp there) and 2.4e-7 unmasked; the block's
// output 5.1e-7 (|y| ≤ 3.67, ~2 ulp); LayerNorm 2.4e-7. Rounding grows along the chain of products
// (q·k over d_head, softmax, weights·v, W_o over d; then LayerNorm, W_1 over d, GELU, W_2 over d_ff),
// so atol = 2e-6 and rtol = 1e-6: about 4–15x the measured difference, room for another BLAS or
// compiler, and still below what any one weight off by 1e-4 does: 2e-5 (W_q) to 4e-4 (W_o) in the
// block's output (the last test shows each caught).
// Beside it, the claim itself: every tensor's max|diff| < 1e-6.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/npy.hpp"
#include "core/params.hpp"
#include "fast/layers.hpp"
#include "fast/model.hpp"
#include "fast/multi_head.hpp"

using namespace attn;

namespace {

const std::string kGolden = ATTN_GOLDEN_DIR;
constexpr std::size_t B = 2, T = 5, D = 16, H = 4, D_FF = 64;  // as tools/make_goldens.py writes them
constexpr double kAtol = 2e-6, kRtol = 1e-6;
constexpr double kClaim = 1e-6;  // C32's "~1e-7": the largest |diff| of every tensor stays below 1e-6

std::string golden(const std::string& name) { return kGolden + "/" + name + ".npy"; }

// (B, T, d) as torch holds a batch → (B·T, d), the rows-are-positions layout of the library.
Mat rows_of(const Tensor3& x) {
    Mat m = Mat::from_shape({x.shape(0) * x.shape(1), x.shape(2)});
    std::copy(x.begin(), x.end(), m.begin());
    return m;
}
Mat load_rows(const std::string& name, std::size_t d) { return rows_of(read_npy_tensor3(golden(name), B, T, d)); }

// (n,) → (1, n), our bias and gain shape
Mat as_row(const Vec& v) {
    Mat m = Mat::from_shape({1, v.shape(0)});
    std::copy(v.begin(), v.end(), m.begin());
    return m;
}

// the rows listed, in that order
Mat pick_rows(const Mat& m, const std::vector<std::size_t>& rows) {
    Mat out = Mat::from_shape({rows.size(), m.shape(1)});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t j = 0; j < m.shape(1); ++j) out(r, j) = m(rows[r], j);
    return out;
}

// torch's weight rows [r0, r1), (out, in) → ours (in, out)
Mat torch_weight(const Mat& w, std::size_t r0, std::size_t r1) {
    return Mat(xt::transpose(Mat(xt::view(w, xt::range(r0, r1), xt::all()))));
}
Mat torch_bias(const Vec& b, std::size_t i0, std::size_t i1) { return as_row(Vec(xt::view(b, xt::range(i0, i1)))); }

struct Agreement {
    double max_abs = 0;        // max |ours − ref|
    double max_excess = -1;    // max of |ours − ref| − (atol + rtol·|ref|); ≤ 0 means every entry passes
    std::size_t worst = 0;     // flat index of that entry
};

Agreement compare(const float* ours, const float* ref, std::size_t n) {
    Agreement a;
    a.max_excess = -1e30;
    for (std::size_t i = 0; i < n; ++i) {
        const double diff = std::abs(static_cast<double>(ours[i]) - ref[i]);
        const double excess = diff - (kAtol + kRtol * std::abs(static_cast<double>(ref[i])));
        // `!(x <= m)` rather than `x > m`: a NaN entry must win, or an all-NaN output would pass.
        if (!(diff <= a.max_abs)) a.max_abs = diff;
        if (!(excess <= a.max_excess)) a.max_excess = excess, a.worst = i;
        if (std::isnan(excess)) break;
    }
    return a;
}

// Asserts one tensor's agreement and prints the measured max|diff|, so a failure says by how much.
template <class E>
void check_close(const std::string& what, const E& ours, const E& ref) {
    REQUIRE(ours.shape() == ref.shape());
    const Agreement a = compare(ours.data(), ref.data(), ours.size());
    INFO(what << " " << shape_str(ref) << ": max|diff| = " << a.max_abs << " (atol " << kAtol << ", rtol " << kRtol
              << "); worst flat index " << a.worst << ": ours " << ours.data()[a.worst] << ", torch " << ref.data()[a.worst]);
    CHECK(a.max_excess <= 0.0);
    CHECK(a.max_abs < kClaim);  // with -s, Catch prints the measured max|diff| beside each passing CHECK
}

// nn.MultiheadAttention's weights as four linear layers of ours.
struct TorchMHA {
    Parameters p;
    Param *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo;
    TorchMHA() {
        const Mat w_in = read_npy_mat(golden("mha_in_proj_weight"), 3 * D, D);  // (3d, d)
        const Vec b_in = read_npy_vec(golden("mha_in_proj_bias"), 3 * D);      // (3d,)
        wq = &p.add("W_q", torch_weight(w_in, 0, D)), bq = &p.add("b_q", torch_bias(b_in, 0, D));
        wk = &p.add("W_k", torch_weight(w_in, D, 2 * D)), bk = &p.add("b_k", torch_bias(b_in, D, 2 * D));
        wv = &p.add("W_v", torch_weight(w_in, 2 * D, 3 * D)), bv = &p.add("b_v", torch_bias(b_in, 2 * D, 3 * D));
        wo = &p.add("W_o", torch_weight(read_npy_mat(golden("mha_out_proj_weight"), D, D), 0, D));
        bo = &p.add("b_o", as_row(read_npy_vec(golden("mha_out_proj_bias"), D)));
    }
    // x (B·T, d) → out (B·T, d); the per-head weights (B·h, T, T) stay in cache
    Mat forward(const Mat& x, bool causal, fast::AttentionCache& cache) const {
        const Mat q = fast::linear_forward(x, *wq, bq), k = fast::linear_forward(x, *wk, bk), v = fast::linear_forward(x, *wv, bv);
        const Mat heads = fast::causal_attention_forward(q, k, v, B, T, H, cache, {.causal = causal});  // (B·T, d)
        return fast::linear_forward(heads, *wo, bo);
    }
};

// A one-block pre-norm Transformer, d = 16, h = 4, d_ff = 64; the embeddings are not used here.
const ModelConfig kBlockConfig{.vocab = 2, .max_T = T, .d_model = D, .n_heads = H, .d_ff = D_FF, .norm = Norm::pre, .biases = true};

// Gives block 0 of model the weights of make_goldens.py's nn.TransformerEncoderLayer.
void load_torch_block(fast::Model& model) {
    Parameters& p = model.params();
    const auto set = [&](const std::string& name, const Mat& value) {
        Param& param = p["block0." + name];
        REQUIRE(param.value.shape() == value.shape());
        param.value = value;
    };
    const Mat w_in = read_npy_mat(golden("block_in_proj_weight"), 3 * D, D);
    const Vec b_in = read_npy_vec(golden("block_in_proj_bias"), 3 * D);
    set("ln1.gain", as_row(read_npy_vec(golden("block_ln1_weight"), D)));
    set("ln1.bias", as_row(read_npy_vec(golden("block_ln1_bias"), D)));
    set("W_q", torch_weight(w_in, 0, D)), set("b_q", torch_bias(b_in, 0, D));
    set("W_k", torch_weight(w_in, D, 2 * D)), set("b_k", torch_bias(b_in, D, 2 * D));
    set("W_v", torch_weight(w_in, 2 * D, 3 * D)), set("b_v", torch_bias(b_in, 2 * D, 3 * D));
    set("W_o", torch_weight(read_npy_mat(golden("block_out_proj_weight"), D, D), 0, D));
    set("b_o", as_row(read_npy_vec(golden("block_out_proj_bias"), D)));
    set("ln2.gain", as_row(read_npy_vec(golden("block_ln2_weight"), D)));
    set("ln2.bias", as_row(read_npy_vec(golden("block_ln2_bias"), D)));
    set("W_1", torch_weight(read_npy_mat(golden("block_linear1_weight"), D_FF, D), 0, D_FF));
    set("b_1", as_row(read_npy_vec(golden("block_linear1_bias"), D_FF)));
    set("W_2", torch_weight(read_npy_mat(golden("block_linear2_weight"), D, D_FF), 0, D));
    set("b_2", as_row(read_npy_vec(golden("block_linear2_bias"), D)));
}

}  // namespace

TEST_CASE("C32: multi-head attention matches torch.nn.MultiheadAttention (causal)", "[claims][C32][sec10]") {
    const TorchMHA mha;
    fast::AttentionCache cache;
    const Mat out = mha.forward(load_rows("mha_x", D), true, cache);
    check_close("causal weights", cache.weights, read_npy_tensor3(golden("mha_causal_weights"), B * H, T, T));
    check_close("causal output", out, load_rows("mha_causal_out", D));
}

TEST_CASE("C32: multi-head attention matches torch.nn.MultiheadAttention (no mask)", "[claims][C32][sec10]") {
    const TorchMHA mha;
    fast::AttentionCache cache;
    const Mat out = mha.forward(load_rows("mha_x", D), false, cache);
    check_close("unmasked weights", cache.weights, read_npy_tensor3(golden("mha_full_weights"), B * H, T, T));
    check_close("unmasked output", out, load_rows("mha_full_out", D));
    // The two goldens differ where the mask matters, so each test checks something the other does not.
    const Mat causal = load_rows("mha_causal_out", D), full = load_rows("mha_full_out", D);
    CHECK(xt::amax(xt::abs(causal - full))() > 1e-2);
}

TEST_CASE("C32: a pre-norm Transformer block matches torch.nn.TransformerEncoderLayer (norm_first, GELU, causal)",
          "[claims][C32][sec10]") {
    fast::Model model(kBlockConfig, 0);
    load_torch_block(model);
    const Mat y = model.block_forward(0, load_rows("block_x", D), B, T);
    check_close("block output", y, load_rows("block_y", D));
}

TEST_CASE("C32: LayerNorm matches torch.nn.LayerNorm — on rows far from mean 0 it matches float64 instead", "[claims][C32][sec10]") {
    Parameters p;
    const Param& gain = p.add("gain", as_row(read_npy_vec(golden("ln_weight"), D)));
    const Param& bias = p.add("bias", as_row(read_npy_vec(golden("ln_bias"), D)));
    const Mat x = read_npy_mat(golden("ln_x"), 6, D);  // row offsets (0, 3, -100, 0, 1000, 0.5), scales (1, 5, 0.01, 100, 1, 1e-3)
    fast::LayerNormCache cache;
    const Mat ours = fast::layernorm_forward(x, gain, bias, cache);
    const Mat torch = read_npy_mat(golden("ln_y"), 6, D), exact = read_npy_mat(golden("ln_y_exact"), 6, D);
    // Rows 0, 1, 3 have |mean| ≤ σ: both fp32 implementations are exact to a few ulp, and agree.
    const std::vector<std::size_t> ordinary = {0, 1, 3};
    check_close("LayerNorm output, rows 0, 1, 3", pick_rows(ours, ordinary), pick_rows(torch, ordinary));
    // Every row, against LayerNorm in float64 (NumPy): ours takes its mean and variance in double.
    check_close("LayerNorm output against float64", ours, exact);
    // Rows 2, 4, 5 sit 10^2 to 10^4 standard deviations from 0. torch's fp32 mean carries an error of
    // ~u·|mean| (u = 2^-24) and x − mean passes it on divided by σ: |torch − exact| reaches 2.2e-4 on
    // row 2 (measured: 0.18 to 0.35 of u·|mean|/σ·max|gain| on these rows). That is torch's rounding, not
    // a difference in what is computed: it stays within atol + u·|mean|/σ·max|gain|.
    const double u = std::ldexp(1.0, -24), max_gain = xt::amax(xt::abs(gain.value))();
    for (std::size_t i : {2u, 4u, 5u}) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < D; ++j) mean += x(i, j);
        mean /= D;
        for (std::size_t j = 0; j < D; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
        var /= D;
        const double bound = kAtol + u * std::abs(mean) / std::sqrt(var + 1e-5) * max_gain;
        double torch_off = 0;
        for (std::size_t j = 0; j < D; ++j) torch_off = std::max(torch_off, std::abs(static_cast<double>(torch(i, j)) - exact(i, j)));
        INFO("row " << i << ": |mean|/sigma = " << std::abs(mean) / std::sqrt(var + 1e-5) << ", max|torch - float64| = " << torch_off
                    << ", bound " << bound);
        CHECK(torch_off <= bound);
    }
}

TEST_CASE("C32's comparison is sharp enough to see one weight off by 1e-4 (it can fail)", "[claims][C32][sec10]") {
    fast::Model model(kBlockConfig, 0);
    load_torch_block(model);
    const Mat x = load_rows("block_x", D), ref = load_rows("block_y", D);
    for (const std::string name : {"W_q", "b_v", "W_o", "ln2.gain", "W_1", "b_2"}) {
        fast::Model perturbed(kBlockConfig, 0);
        load_torch_block(perturbed);
        perturbed.params()["block0." + name].value(0, 0) += 1e-4f;
        const Mat y = perturbed.block_forward(0, x, B, T);
        const Agreement a = compare(y.data(), ref.data(), y.size());
        INFO(name << "(0, 0) + 1e-4: max|diff| = " << a.max_abs);
        CHECK(a.max_excess > 0.0);
    }
    // and unperturbed it passes, in the same harness
    Mat y = model.block_forward(0, x, B, T);
    CHECK(compare(y.data(), ref.data(), y.size()).max_excess <= 0.0);
    // a NaN entry fails both checks
    y(1, 2) = std::numeric_limits<float>::quiet_NaN();
    const Agreement nan_out = compare(y.data(), ref.data(), y.size());
    CHECK_FALSE(nan_out.max_excess <= 0.0);
    CHECK_FALSE(nan_out.max_abs < kClaim);
}
