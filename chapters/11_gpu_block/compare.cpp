#include "chapters/11_gpu_block/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "fast/model.hpp"
#include "fast/multi_head.hpp"
#include "gpu.hpp"
#include "report/table.hpp"
#include "transformer_gpu.hpp"

namespace attn::sec11 {

using gpu::AttentionVersion;

namespace {

struct Compared {
    std::string tensor, shape;
    double max_diff;
    double abs_tol, rel_tol;
    bool ok;
};

Compared compare(const std::string& tensor, const Mat& gpu_value, const Mat& cpu_value, double abs_tol, double rel_tol) {
    Compared c{tensor, shape_str(cpu_value), 0.0, abs_tol, rel_tol, gpu_value.shape() == cpu_value.shape()};
    for (std::size_t i = 0; c.ok && i < cpu_value.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(gpu_value.data()[i]) - cpu_value.data()[i]);
        c.max_diff = std::max(c.max_diff, diff);
        if (!(diff <= abs_tol + rel_tol * std::fabs(cpu_value.data()[i]))) c.ok = false;  // NaN fails
    }
    return c;
}

}  // namespace

void compare_cpu_gpu(const CompareSetup& setup) {
    const std::uint64_t seed = setup.seed;
    const int B = setup.B, T = setup.T, d_model = setup.d_model, n_heads = setup.n_heads, n_layers = setup.n_layers;
    const ModelConfig config = gpt2_config({.vocab = 64, .max_T = static_cast<std::size_t>(T), .d_model = static_cast<std::size_t>(d_model),
                                            .n_heads = static_cast<std::size_t>(n_heads), .n_layers = static_cast<std::size_t>(n_layers)});
    fast::Model cpu(config, seed);
    Rng rng(seed, 11);
    // Biases start at 0 and gains at 1: a forgotten bias add or gain would go unseen. Nudge every parameter.
    for (Param& p : cpu.params().all())
        for (float& w : p.value) w += 0.1f * static_cast<float>(rng.normal());
    gpu::GpuTransformer gpu_model(cpu);
    const std::size_t N = static_cast<std::size_t>(B) * T;
    const Mat x = rng.normal_mat(N, static_cast<std::size_t>(d_model));  // (B·T, d_model), N(0, 1)
    std::cout << "\nOne pre-norm model (d_model = " << d_model << ", " << n_heads << " heads, d_ff = " << 4 * d_model << ", "
              << n_layers << " blocks), built from --seed " << seed << " once on the CPU\n"
              << "and once on the GPU, every parameter nudged off its initial value; x (B·T, d_model) = (" << B << "·" << T
              << ", " << d_model << "), N(0, 1).\n"
              << "A tensor agrees when every entry is within abs + rel·|cpu|: fp32 on both sides, summed in other orders\n"
              << "(cuBLAS vs OpenBLAS, tree vs loop reductions, the online vs the two-pass softmax).\n\n";

    std::vector<Compared> rows;
    Parameters& p = cpu.params();
    fast::LayerNormCache c1, c2;
    const Mat n1 = fast::layernorm_forward(x, p["block0.ln1.gain"], p["block0.ln1.bias"], c1);
    const Mat q = fast::linear_forward(n1, p["block0.W_q"], &p["block0.b_q"]);
    const Mat k = fast::linear_forward(n1, p["block0.W_k"], &p["block0.b_k"]);
    const Mat v = fast::linear_forward(n1, p["block0.W_v"], &p["block0.b_v"]);
    fast::AttentionCache cache;
    const Mat mixed = fast::causal_attention_forward(q, k, v, B, T, n_heads, cache);
    const Mat a = x + fast::linear_forward(mixed, p["block0.W_o"], &p["block0.b_o"]);
    const Mat n2 = fast::layernorm_forward(a, p["block0.ln2.gain"], p["block0.ln2.bias"], c2);
    const Mat hidden = fast::gelu_forward(fast::linear_forward(n2, p["block0.W_1"], &p["block0.b_1"]));
    const Mat y0 = cpu.block_forward(0, x, B, T);
    // The attention's tolerance scales with its inputs: fp32 rounds a score q·k/√d_head, a sum of d_head
    // products, by at most d_head·u·max|q|·max|k|/√d_head on each side (u = 2^-24), and a score off by δ moves
    // the output by at most 2δ·max|v|. At T = 256 on an H200 the three versions differed from the CPU by
    // 3.0e-5, outside a fixed 1e-5 + 1e-4·|cpu| (docs/gpu/); a wrong scale or mask is off by O(|v|).
    const double u = 0x1.0p-24, d_head = static_cast<double>(d_model / n_heads);
    const double score_err = 2 * d_head * u * static_cast<double>(xt::amax(xt::abs(q))()) *
                             static_cast<double>(xt::amax(xt::abs(k))()) / std::sqrt(d_head);
    const double attention_abs = 1e-5 + 2 * score_err * static_cast<double>(xt::amax(xt::abs(v))());
    for (AttentionVersion version : {AttentionVersion::v1, AttentionVersion::v2}) {
        gpu_model.block_forward(0, x, B, T, version);
        rows.push_back(compare(std::string("block 0  attention ") + gpu::version_name(version) + " (heads merged)",
                               gpu_model.activation(0, "attention"), mixed, attention_abs, 1e-4));
    }
    const Mat y0_gpu = gpu_model.block_forward(0, x, B, T, AttentionVersion::v3);
    rows.push_back(compare("block 0  attention v3 (heads merged)", gpu_model.activation(0, "attention"), mixed, attention_abs, 1e-4));
    rows.insert(rows.begin(), {compare("block 0  LN_1(x)", gpu_model.activation(0, "ln1"), n1, 1e-5, 1e-5),
                               compare("block 0  q = LN_1(x) W_q + b_q", gpu_model.activation(0, "q"), q, 1e-5, 1e-4),
                               compare("block 0  k = LN_1(x) W_k + b_k", gpu_model.activation(0, "k"), k, 1e-5, 1e-4),
                               compare("block 0  v = LN_1(x) W_v + b_v", gpu_model.activation(0, "v"), v, 1e-5, 1e-4)});
    rows.push_back(compare("block 0  a = x + attention W_o + b_o", gpu_model.activation(0, "a"), a, 1e-4, 1e-4));
    rows.push_back(compare("block 0  LN_2(a)", gpu_model.activation(0, "ln2"), n2, 1e-4, 1e-4));
    rows.push_back(compare("block 0  gelu(LN_2(a) W_1 + b_1)", gpu_model.activation(0, "hidden"), hidden, 1e-4, 1e-4));
    rows.push_back(compare("block 0  y (vs Model::block_forward)", y0_gpu, y0, 1e-4, 1e-4));
    Mat ref_stack = y0;
    for (int l = 1; l < n_layers; ++l) ref_stack = cpu.block_forward(static_cast<std::size_t>(l), ref_stack, B, T);
    rows.push_back(compare("stack of " + std::to_string(n_layers) + " blocks, y (v3)", gpu_model.forward(x, B, T), ref_stack,
                           1e-4 * n_layers, 1e-4 * n_layers));
    std::printf("  %-44s %-12s %11s   %-22s\n", "tensor (GPU vs CPU)", "shape", "max |diff|", "tolerance (abs + rel·|cpu|)");
    bool all_close = true;
    for (const Compared& c : rows) {
        const std::string tol = fmt_sci(c.abs_tol, 0) + " + " + fmt_sci(c.rel_tol, 0);
        std::printf("  %-44s %-12s %11s   %-22s %s\n", c.tensor.c_str(), c.shape.c_str(), fmt_sci(c.max_diff).c_str(),
                    tol.c_str(), c.ok ? "ok" : "FAIL");
        all_close = all_close && c.ok;
    }
    std::cout << (all_close ? "  every tensor agrees within its tolerance\n" : "  SOME TENSORS DIFFER (above)\n");
    require(all_close, "11_gpu_block", "the GPU block does not match the CPU block (see the table)");
}

}  // namespace attn::sec11
