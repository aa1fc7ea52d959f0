// GPU tests: each kernel against the CPU library, on a real device. With no device this program says so
// and returns 77, which ctest reports as SKIPPED (SKIP_RETURN_CODE) — never as passed. The same kernels'
// source also runs on the CPU in the unit tests (tests/common/test_gpu_host.cpp), where their logic is
// checked without a GPU; this file checks what only the device shows: the real compiler, cuBLAS, the
// launch limits, shared memory, and the numbers.
//
// Every output is filled with NaN before the kernel that writes it (DeviceBuffer::poison), so an element a
// kernel skips fails its comparison, and every version is compared with the CPU library, never with another
// version. `gpu_tests --quick` runs the small shapes only, for compute-sanitizer (tools/gpu_check.sh), which
// runs kernels 10–100× slower.
//
// Tolerances: an entry passes when |gpu − cpu| ≤ abs + rel · |cpu|. Both sides are fp32; they differ in the
// order of their sums (cuBLAS vs OpenBLAS, tree reductions vs loops, FlashAttention's rescaling vs a
// two-pass softmax) and in expf/erff, a few ulps each. The tolerances below are ~10–100× the differences
// expected from that, and far below what any indexing or masking error produces (order 0.1–1).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "attention_train.hpp"
#include "buffer.hpp"
#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "fast/model.hpp"
#include "fast/multi_head.hpp"
#include "gpu.hpp"
#include "gpu_model.hpp"
#include "math/positions.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "ops.hpp"
#include "train/optim.hpp"
#include "train/train.hpp"
#include "train_layers.hpp"
#include "transformer_gpu.hpp"

using attn::Mat;
using attn::gpu::AttentionVersion;
namespace gpu = attn::gpu;

namespace {
int failures = 0;

// The largest |a − b| and whether every entry is within abs + rel·|ref|.
void check_close(const std::string& what, const Mat& got, const Mat& ref, double abs_tol, double rel_tol) {
    bool ok = got.shape() == ref.shape();
    double worst = 0;
    for (std::size_t i = 0; ok && i < ref.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(got.data()[i]) - ref.data()[i]);
        if (!(diff <= abs_tol + rel_tol * std::fabs(ref.data()[i]))) ok = false;  // NaN fails too
        worst = std::max(worst, diff);
    }
    failures += !ok;
    std::printf("  %-62s max |diff| %.2e (tol %.0e + %.0e·|ref|) %s\n", what.c_str(), worst, abs_tol, rel_tol, ok ? "ok" : "FAIL");
}

void check(const std::string& what, bool ok, const std::string& detail = "") {
    failures += !ok;
    std::printf("  %-62s %s%s\n", what.c_str(), ok ? "ok" : "FAIL", detail.empty() ? "" : ("  " + detail).c_str());
}

// Expect `body` to throw an exception of type E whose message contains `needle`.
template <class E>
void check_throws(const std::string& what, const std::function<void()>& body, const std::string& needle) {
    try {
        body();
        check(what, false, "(nothing thrown)");
    } catch (const E& e) {
        const std::string msg = e.what();
        check(what, msg.find(needle) != std::string::npos, "\"" + msg.substr(0, 150) + "\"");
    } catch (const std::exception& e) {
        check(what, false, std::string("(wrong exception: ") + e.what() + ")");
    }
}

std::string shape4(int B, int T, int h, int dh) {
    return "(B, T, h, d_head) = (" + std::to_string(B) + ", " + std::to_string(T) + ", " + std::to_string(h) + ", " +
           std::to_string(dh) + ")";
}

Mat attention_on_gpu(AttentionVersion version, const Mat& q, const Mat& k, const Mat& v, int B, int T, int n_heads) {
    const int d = static_cast<int>(q.shape(1)), dh = d / n_heads;
    const gpu::DeviceBuffer dq = gpu::to_device(q, "q"), dk = gpu::to_device(k, "k"), dv = gpu::to_device(v, "v");
    gpu::DeviceBuffer qh(q.size(), "q heads"), kh(q.size(), "k heads"), vh(q.size(), "v heads"), oh(q.size(), "out heads"),
        out(q.size(), "out");
    for (gpu::DeviceBuffer* b : {&qh, &kh, &vh, &oh, &out}) b->poison();
    gpu::split_heads(dq.data(), qh.data(), B, T, n_heads, dh);
    gpu::split_heads(dk.data(), kh.data(), B, T, n_heads, dh);
    gpu::split_heads(dv.data(), vh.data(), B, T, n_heads, dh);
    gpu::attention(version, qh.data(), kh.data(), vh.data(), oh.data(), B * n_heads, T, dh);
    gpu::merge_heads(oh.data(), out.data(), B, T, n_heads, dh);
    gpu::synchronize();
    return gpu::to_host(out, q.shape(0), q.shape(1));
}

// --- the attention's training kernels (attention_train.hpp), as tests/common/test_gpu_attention_train.cpp
// checks them on the CPU emulation: q, k, v, dout drawn on the merged (B·T, h·d) layout, the CPU's
// causal_attention_forward / _backward split to (B·h, T, d), every GPU output poisoned first.
struct TrainCase {
    int B, n_heads, T, d_k, d_v;
    bool learned = true, causal = true, scaled = true, alibi = false;
    std::string name() const {
        return "(B, h, T, d_k, d_v) = (" + std::to_string(B) + ", " + std::to_string(n_heads) + ", " + std::to_string(T) + ", " +
               std::to_string(d_k) + ", " + std::to_string(d_v) + ")" + (learned ? "" : " uniform") +
               (causal ? "" : " not-causal") + (scaled ? "" : " no-scale") + (alibi ? " ALiBi" : "");
    }
};

gpu::DeviceBuffer device_copy(const float* host, std::size_t n, const std::string& what) {
    gpu::DeviceBuffer b(n, what);
    b.upload(host, n);
    return b;
}
gpu::DeviceBuffer device_poisoned(std::size_t n, const std::string& what) {
    gpu::DeviceBuffer b(n, what);
    b.poison();
    return b;
}
std::vector<float> download(const gpu::DeviceBuffer& b) {
    gpu::synchronize();
    std::vector<float> x(b.size());
    b.download(x.data(), x.size());
    return x;
}
void check_close_flat(const std::string& what, const std::vector<float>& got, const float* ref, std::size_t n, double abs_tol,
                      double rel_tol) {
    bool ok = got.size() == n;
    double worst = 0;
    for (std::size_t i = 0; ok && i < n; ++i) {
        const double diff = std::fabs(static_cast<double>(got[i]) - ref[i]);
        if (!(diff <= abs_tol + rel_tol * std::fabs(ref[i]))) ok = false;
        worst = std::max(worst, diff);
    }
    failures += !ok;
    std::printf("  %-72s max |diff| %.2e (tol %.0e + %.0e·|ref|) %s\n", what.c_str(), worst, abs_tol, rel_tol, ok ? "ok" : "FAIL");
}
double max_abs(const attn::Tensor3& x) { return static_cast<double>(xt::amax(xt::abs(x))()); }

// Both paths (flash where flash_supports says so) against the CPU, the two paths against each other, and
// each path run twice for the same bits.
void check_attention_train(const TrainCase& c, attn::Rng& rng) {
    const std::size_t B = c.B, T = c.T, h = c.n_heads, N = B * T, BH = B * h;
    const Mat q = rng.normal_mat(N, h * c.d_k), k = rng.normal_mat(N, h * c.d_k), v = rng.normal_mat(N, h * c.d_v),
              dout = rng.normal_mat(N, h * c.d_v);
    attn::Tensor3 bias = attn::Tensor3::from_shape({h, T, T});
    std::vector<float> slopes;
    if (c.alibi) {
        const std::vector<double> m = attn::alibi_slopes(h);
        for (std::size_t j = 0; j < h; ++j) {
            xt::view(bias, j) = attn::alibi_bias(T, m[j]);
            slopes.push_back(static_cast<float>(m[j]));
        }
    }
    attn::fast::AttentionCache cache;
    const Mat out = attn::fast::causal_attention_forward(
        q, k, v, B, T, h, cache,
        {.weights = c.learned ? attn::fast::Weights::learned : attn::fast::Weights::uniform, .causal = c.causal, .scale = c.scaled,
         .bias = c.alibi ? &bias : nullptr});
    Mat dq, dk, dv;
    attn::fast::causal_attention_backward(dout, cache, B, T, h, dq, dk, dv);
    const attn::Tensor3 qh = attn::split_heads(q, B, T, h), kh = attn::split_heads(k, B, T, h), vh = attn::split_heads(v, B, T, h),
                        douth = attn::split_heads(dout, B, T, h), out_ref = attn::split_heads(out, B, T, h),
                        dq_ref = attn::split_heads(dq, B, T, h), dk_ref = attn::split_heads(dk, B, T, h),
                        dv_ref = attn::split_heads(dv, B, T, h);
    // Tolerances from fp32 rounding (as 11_gpu_block's): a score q·k·scale is off by at most
    // score_err = 2·d_k·u·max|q|·max|k|·scale (u = 2⁻²⁴) on each side, which moves a weight by a relative
    // score_err and the output by 2·score_err·max|v|. The gradients add dout·v (d_v products) and a second
    // product: 1e-4 + rel 1e-3 is ~10× what those give at these sizes, far below an indexing or mask error.
    const float scale = c.scaled ? 1.0f / std::sqrt(static_cast<float>(c.d_k)) : 1.0f;
    const double score_err = c.learned ? 2.0 * c.d_k * 0x1.0p-24 * max_abs(qh) * max_abs(kh) * scale : 0.0;
    const double out_abs = 1e-5 + 2 * score_err * max_abs(vh), grad_abs = 1e-4 + 4 * score_err * max_abs(vh) * max_abs(douth);
    const gpu::DeviceBuffer q_dev = device_copy(qh.data(), qh.size(), "q"), k_dev = device_copy(kh.data(), kh.size(), "k"),
                            v_dev = device_copy(vh.data(), vh.size(), "v"), dout_dev = device_copy(douth.data(), douth.size(), "dout");
    const gpu::DeviceBuffer slopes_dev = c.alibi ? device_copy(slopes.data(), slopes.size(), "ALiBi slopes") : gpu::DeviceBuffer();
    gpu::AttentionShape s{.B = c.B, .n_heads = c.n_heads, .T = c.T, .d_k = c.d_k, .d_v = c.d_v,
                          .weighting = c.learned ? gpu::Weighting::learned : gpu::Weighting::uniform, .causal = c.causal,
                          .scale = scale, .alibi_slopes = c.alibi ? slopes_dev.data() : nullptr};
    using Outputs = std::array<std::vector<float>, 5>;  // out, weights or lse, dq, dk, dv
    const auto materialised = [&] {
        gpu::DeviceBuffer o = device_poisoned(vh.size(), "out"), w = device_poisoned(BH * T * T, "weights"),
                          scratch = device_poisoned(BH * T * T, "scratch"), gq = device_poisoned(qh.size(), "dq"),
                          gk = device_poisoned(kh.size(), "dk"), gv = device_poisoned(vh.size(), "dv");
        gpu::attention_forward_materialised(q_dev.data(), k_dev.data(), v_dev.data(), o.data(), w.data(), s);
        gpu::attention_backward_materialised(q_dev.data(), k_dev.data(), v_dev.data(), w.data(), dout_dev.data(), gq.data(),
                                             gk.data(), gv.data(), scratch.data(), s);
        return Outputs{download(o), download(w), download(gq), download(gk), download(gv)};
    };
    const auto flash = [&] {
        gpu::DeviceBuffer o = device_poisoned(vh.size(), "out"), lse = device_poisoned(BH * T, "lse"),
                          delta = device_poisoned(BH * T, "delta"), gq = device_poisoned(qh.size(), "dq"),
                          gk = device_poisoned(kh.size(), "dk"), gv = device_poisoned(vh.size(), "dv");
        gpu::attention_forward_flash(q_dev.data(), k_dev.data(), v_dev.data(), o.data(), lse.data(), s);
        gpu::attention_backward_flash(q_dev.data(), k_dev.data(), v_dev.data(), o.data(), lse.data(), dout_dev.data(), gq.data(),
                                      gk.data(), gv.data(), delta.data(), s);
        return Outputs{download(o), download(lse), download(gq), download(gk), download(gv)};
    };
    const std::array<const attn::Tensor3*, 5> refs = {&out_ref, &cache.weights, &dq_ref, &dk_ref, &dv_ref};
    const std::array<const char*, 5> names = {"out", "weights", "dq", "dk", "dv"};
    const Outputs m = materialised();
    for (std::size_t i = 0; i < 5; ++i)
        check_close_flat(std::string("materialised ") + names[i] + " " + c.name(), m[i], refs[i]->data(), refs[i]->size(),
                         i < 2 ? out_abs : grad_abs, i < 2 ? 1e-4 : 1e-3);
    check("materialised: the same bits on a second run " + c.name(), materialised() == m);
    if (!gpu::flash_supports(s)) return;
    if (gpu::flash_shared_bytes(s.d_k) > gpu::device_shared_bytes_per_block()) {  // GpuModel takes the materialised path here
        std::printf("  %-72s not run: needs %zu B of shared memory a block, the card allows %zu\n", ("flash " + c.name()).c_str(),
                    gpu::flash_shared_bytes(s.d_k), gpu::device_shared_bytes_per_block());
        return;
    }
    const Outputs f = flash();
    // lse_t = log Σ exp(score) over the allowed keys = score_tt − log weights_tt, from the CPU's weights (the
    // diagonal's: ALiBi adds it nothing, so it never underflows); off by the score's rounding and the sum's
    // (T positive terms: a relative T·u, so T·u in the log).
    std::vector<float> lse_ref;
    for (std::size_t bh = 0; bh < BH; ++bh)
        for (std::size_t t = 0; t < T; ++t) {
            double dot = 0;
            for (int e = 0; e < c.d_k; ++e) dot += static_cast<double>(qh(bh, t, e)) * kh(bh, t, e);
            lse_ref.push_back(static_cast<float>(scale * dot - std::log(static_cast<double>(cache.weights(bh, t, t)))));
        }
    for (std::size_t i = 0; i < 5; ++i) {
        if (i == 1) {
            check_close_flat("flash lse " + c.name(), f[1], lse_ref.data(), lse_ref.size(),
                             1e-5 + 2 * score_err + static_cast<double>(T) * 0x1.0p-24, 1e-5);
            continue;
        }
        check_close_flat(std::string("flash ") + names[i] + " " + c.name(), f[i], refs[i]->data(), refs[i]->size(),
                         i < 2 ? out_abs : grad_abs, i < 2 ? 1e-4 : 1e-3);
        check_close_flat(std::string("flash vs materialised ") + names[i] + " " + c.name(), f[i], m[i].data(), m[i].size(),
                         i < 2 ? out_abs : grad_abs, i < 2 ? 1e-4 : 1e-3);
    }
    check("flash: the same bits on a second run " + c.name(), flash() == f);
}

// Milliseconds of the flash and the materialised forward and backward at one shape (no assertion).
void time_attention_train(int BH, int T, int d) {
    const std::size_t n = static_cast<std::size_t>(BH) * T * d, nn = static_cast<std::size_t>(BH) * T * T;
    gpu::DeviceBuffer q(n, "q"), k(n, "k"), v(n, "v"), dout(n, "dout"), out(n, "out"), dq(n, "dq"), dk(n, "dk"), dv(n, "dv"),
        lse(static_cast<std::size_t>(BH) * T, "lse"), delta(static_cast<std::size_t>(BH) * T, "delta"), w(nn, "weights"),
        scratch(nn, "scratch");
    attn::Rng rng(3);
    std::vector<float> x(n);
    for (gpu::DeviceBuffer* b : {&q, &k, &v, &dout}) {
        rng.fill_normal(x.data(), n);
        b->upload(x.data(), n);
    }
    const gpu::AttentionShape s{.B = BH, .n_heads = 1, .T = T, .d_k = d, .d_v = d, .scale = 1.0f / std::sqrt(static_cast<float>(d))};
    const auto fwd_flash = [&] { gpu::attention_forward_flash(q.data(), k.data(), v.data(), out.data(), lse.data(), s); };
    const auto bwd_flash = [&] {
        gpu::attention_backward_flash(q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(), dq.data(), dk.data(),
                                      dv.data(), delta.data(), s);
    };
    const auto fwd_mat = [&] { gpu::attention_forward_materialised(q.data(), k.data(), v.data(), out.data(), w.data(), s); };
    const auto bwd_mat = [&] {
        gpu::attention_backward_materialised(q.data(), k.data(), v.data(), w.data(), dout.data(), dq.data(), dk.data(), dv.data(),
                                             scratch.data(), s);
    };
    fwd_flash(), bwd_flash(), fwd_mat(), bwd_mat();  // warm-up (first launches, cuBLAS's heuristics)
    std::printf("  B·h = %d, T = %5d, d_head = %d: forward flash %8.3f ms, materialised %8.3f ms; backward flash %8.3f ms, "
                "materialised %8.3f ms\n",
                BH, T, d, gpu::time_ms(fwd_flash), gpu::time_ms(fwd_mat), gpu::time_ms(bwd_flash), gpu::time_ms(bwd_mat));
}

void perturb(attn::fast::Model& model, attn::Rng& rng) {  // biases 0 and gains 1 would hide a missing add
    for (attn::Param& p : model.params().all())
        for (float& w : p.value) w += 0.1f * static_cast<float>(rng.normal());
}

using spec::same_bits;
gpu::DeviceInts ints_on_device(const std::vector<int>& v) {
    gpu::DeviceInts d(v.size(), "ints");
    d.upload(v.data(), v.size());
    return d;
}

// The layers' training kernels (train_layers.hpp) against the CPU library: the comparisons of
// tests/common/test_gpu_train_layers.cpp, on odd shapes and on larger ones. "bits" where the kernel does the
// CPU's float operations in the CPU's order (no FMA contraction: the _rn intrinsics), a tolerance elsewhere.
void train_layer_checks(attn::Rng& rng, bool quick) {
    std::cout << "training kernels (train_layers.hpp) against the CPU layers\n";
    // 8200 rows: past one chunk of the column sums (kColumnSumChunk rows), so that --quick, which compute-sanitizer
    // runs, also launches the chunked pass and its combine kernel, as a step at the chapter's 8,192 rows does
    for (const auto& [N, d] : {std::pair{45, 20}, {9, 70}, {8200, 3}, {2048, 768}}) {
        if (quick && N * d > 30000) continue;
        const std::string tag = "(" + std::to_string(N) + ", " + std::to_string(d) + ")";
        attn::Parameters p;
        attn::Param& gain = p.normal("gain", 1, d, 1.0f, rng);
        attn::Param& bias = p.normal("bias", 1, d, 1.0f, rng);
        gain.grad = rng.normal_mat(1, d), bias.grad = rng.normal_mat(1, d);
        const Mat dgain0 = gain.grad, dbias0 = bias.grad;
        const Mat x = rng.normal_mat(N, d) * 2.0f + 3.0f, dy = rng.normal_mat(N, d);
        attn::fast::LayerNormCache cache;
        const Mat y_cpu = attn::fast::layernorm_forward(x, gain, bias, cache);
        const Mat dx_cpu = attn::fast::layernorm_backward(dy, cache, gain, bias);
        const gpu::DeviceBuffer gx = gpu::to_device(x, "x"), gg = gpu::to_device(gain.value, "gain"),
                                gb = gpu::to_device(bias.value, "bias"), gdy = gpu::to_device(dy, "dy");
        gpu::DeviceBuffer gy(x.size(), "y"), gmean(N, "mean"), grstd(N, "rstd"), gdx(x.size(), "dx");
        gy.poison(), gmean.poison(), grstd.poison(), gdx.poison();
        gpu::DeviceBuffer gdg = gpu::to_device(dgain0, "dgain"), gdb = gpu::to_device(dbias0, "dbias");
        gpu::layernorm_forward(gx.data(), gg.data(), gb.data(), gy.data(), gmean.data(), grstd.data(), N, d);
        gpu::layernorm_backward(gdy.data(), gx.data(), gg.data(), gmean.data(), grstd.data(), gdx.data(), gdg.data(), gdb.data(), N, d);
        check_close("layernorm_forward y " + tag, gpu::to_host(gy, N, d), y_cpu, 1e-5, 1e-5);
        check_close("layernorm_backward dx " + tag, gpu::to_host(gdx, N, d), dx_cpu, 1e-5, 1e-5);
        // column sums of N terms of O(1) in two orders: the float error grows between √N (typical) and N (worst)
        // ulps of the partial sums (~√N), so the allowance grows with N
        const double col_tol = 1e-5 * std::max(1.0, N / 16.0);
        check_close("layernorm_backward dgain += " + tag, gpu::to_host(gdg, 1, d), gain.grad, col_tol, 1e-5);
        check_close("layernorm_backward dbias += " + tag, gpu::to_host(gdb, 1, d), bias.grad, col_tol, 1e-5);
        const Mat dg1 = gpu::to_host(gdg, 1, d);
        gdg.upload(dgain0.data(), dgain0.size()), gdb.upload(dbias0.data(), dbias0.size());
        gpu::layernorm_backward(gdy.data(), gx.data(), gg.data(), gmean.data(), grstd.data(), gdx.data(), gdg.data(), gdb.data(), N, d);
        check("layernorm_backward twice: the same bits " + tag, same_bits(gpu::to_host(gdg, 1, d), dg1));

        gpu::gelu_backward(gx.data(), gdy.data(), gdx.data(), x.size());
        check_close("gelu_backward " + tag, gpu::to_host(gdx, N, d), spec::gelu_backward(x, dy), 1e-6, 1e-5);
        Mat db_cpu = dbias0;
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < d; ++j) db_cpu(0, j) += dy(i, j);
        gdb.upload(dbias0.data(), dbias0.size());
        gpu::bias_backward(gdy.data(), gdb.data(), N, d);
        check_close("bias_backward += " + tag, gpu::to_host(gdb, 1, d), db_cpu, col_tol, 1e-5);
        gpu::DeviceBuffer gz = gpu::to_device(dy, "z");
        gpu::add_inplace(gz.data(), gx.data(), x.size());
        gpu::scale_inplace(gz.data(), x.size(), 0.37f);
        check("add_inplace, scale_inplace: bits " + tag, same_bits(gpu::to_host(gz, N, d), Mat((dy + x) * 0.37f)));
        double sq = 0;
        for (float v : x) sq += static_cast<double>(v) * v;
        const double got = gpu::sum_squares(gx.data(), x.size());
        check("sum_squares " + tag + " within 1e-12 relative, twice the same", std::fabs(got - sq) <= 1e-12 * sq &&
                                                                                 gpu::sum_squares(gx.data(), x.size()) == got);
    }
    {
        const Mat big = rng.normal_mat(1, 3000001);  // past 256 blocks: each thread strides
        double sq = 0;
        for (float v : big) sq += static_cast<double>(v) * v;
        const gpu::DeviceBuffer gbig = gpu::to_device(big, "big");
        check("sum_squares n = 3000001 within 1e-12 relative", std::fabs(gpu::sum_squares(gbig.data(), big.size()) - sq) <= 1e-12 * sq);
    }
    // V = 1024: the chapter's vocabulary, past the 256 threads of a row's block (each strides), in --quick for compute-sanitizer
    for (const auto& [B, T, d, V] : {std::array{3, 15, 20, 37}, {2, 8, 16, 1024}, {8, 256, 768, 5000}}) {
        if (quick && V > 1024) continue;
        const int N = B * T;
        const std::string tag = "B, T, d, V = " + std::to_string(B) + ", " + std::to_string(T) + ", " + std::to_string(d) + ", " +
                                std::to_string(V);
        std::vector<int> tokens(N), targets(N);
        int counted = 0;
        for (int n = 0; n < N; ++n) {
            tokens[n] = static_cast<int>(rng.below(V / 3 + 1)) * 3 % V;  // repeats and gaps
            targets[n] = n % 7 == 3 ? -1 : static_cast<int>(rng.below(V));
            counted += targets[n] >= 0;
        }
        attn::Parameters p;
        attn::Param& wte = p.normal("wte", V, d, 1.0f, rng);
        attn::Param& wpe = p.normal("wpe", T + 5, d, 1.0f, rng);
        wte.grad = rng.normal_mat(V, d), wpe.grad = rng.normal_mat(T + 5, d);
        const Mat dwte0 = wte.grad, dwpe0 = wpe.grad, table = attn::sinusoidal_table(T, d), dx = rng.normal_mat(N, d);
        Mat x_cpu = attn::fast::embedding_forward(tokens, T, wte, &wpe);
        for (int n = 0; n < N; ++n)
            for (int j = 0; j < d; ++j) x_cpu(n, j) += table(n % T, j);
        attn::fast::embedding_backward(tokens, T, dx, wte, &wpe);
        const gpu::DeviceInts gtok = ints_on_device(tokens), gtarget = ints_on_device(targets);
        const gpu::DeviceBuffer gwte = gpu::to_device(wte.value, "wte"), gwpe = gpu::to_device(wpe.value, "wpe"),
                                gtable = gpu::to_device(table, "table"), gdx = gpu::to_device(dx, "dx");
        gpu::DeviceBuffer gx(static_cast<std::size_t>(N) * d, "x"), gdwte = gpu::to_device(dwte0, "dwte"), gdwpe = gpu::to_device(dwpe0, "dwpe");
        gx.poison();
        gpu::embedding_forward(gtok.data(), gwte.data(), gwpe.data(), gtable.data(), gx.data(), B, T, d, V);
        check("embedding_forward: bits, " + tag, same_bits(gpu::to_host(gx, N, d), x_cpu));
        const gpu::TokenGroups groups = gpu::group_tokens(tokens);
        gpu::embedding_backward(groups, gdx.data(), gdwte.data(), gdwpe.data(), B, T, d);
        check("embedding_backward dwte +=, dwpe +=: bits, " + tag,
              same_bits(gpu::to_host(gdwte, V, d), wte.grad) && same_bits(gpu::to_host(gdwpe, T + 5, d), wpe.grad));

        const Mat logits = rng.normal_mat(N, V) * 3.0f;
        const attn::fast::CrossEntropy ce = attn::fast::cross_entropy_forward(logits, targets);
        const gpu::DeviceBuffer glogits = gpu::to_device(logits, "logits");
        gpu::DeviceBuffer gd(logits.size(), "dlogits");
        gd.poison();
        const double loss = gpu::cross_entropy(glogits.data(), gtarget.data(), nullptr, gd.data(), N, V, counted);
        check("cross_entropy mean loss within 1e-6 relative, " + tag, std::fabs(loss - ce.loss) <= 1e-6 * ce.loss,
              "gpu " + std::to_string(loss) + ", cpu " + std::to_string(ce.loss));
        check_close("cross_entropy dlogits, " + tag, gpu::to_host(gd, N, V), attn::fast::cross_entropy_backward(ce, targets), 1e-8, 1e-5);
        check("cross_entropy twice: the same loss", gpu::cross_entropy(glogits.data(), gtarget.data(), nullptr, nullptr, N, V, counted) == loss);

        const int n_heads = 2, d_k = d / n_heads;  // RoPE on (B·T, n_heads·d_k)
        const Mat angles = attn::rope_angles(static_cast<std::size_t>(T), static_cast<std::size_t>(d_k));
        Mat q = rng.normal_mat(N, d);
        gpu::DeviceBuffer gq = gpu::to_device(q, "q");
        const gpu::DeviceBuffer gangles = gpu::to_device(angles, "angles");
        for (const float sign : {1.0f, -1.0f}) {
            attn::rotate_pairs(q, angles, n_heads, sign);  // the CPU attention's RoPE
            gpu::rope_rotate(gq.data(), gangles.data(), B, T, n_heads, d_k, sign);
            check(std::string("rope_rotate sign ") + (sign > 0 ? "+1" : "-1") + ": bits, " + tag, same_bits(gpu::to_host(gq, N, d), q));
        }
    }
    {
        attn::Parameters p;
        p.normal("W", 45, 20, 0.5f, rng);
        p.normal("b", 1, 37, 0.5f, rng).decay = false;
        const attn::AdamWConfig config{.lr = 3e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f, .warmup_steps = 2};
        attn::AdamW opt(p, config);
        std::vector<gpu::DeviceBuffer> w, m, v, g;
        for (attn::Param& q : p.all()) {
            w.push_back(gpu::to_device(q.value, q.name)), g.push_back(gpu::DeviceBuffer(q.value.size(), "g"));
            m.push_back(gpu::DeviceBuffer(q.value.size(), "m")), m.back().zero();
            v.push_back(gpu::DeviceBuffer(q.value.size(), "v")), v.back().zero();
        }
        bool same = true;
        for (int step = 1; step <= 3; ++step) {
            std::size_t k = 0;
            for (attn::Param& q : p.all()) {
                q.grad = rng.normal_mat(q.value.shape(0), q.value.shape(1)) * 0.1f;
                g[k++].upload(q.grad.data(), q.grad.size());
            }
            opt.step();
            const float bc1 = 1.0f - std::pow(config.beta1, static_cast<float>(step));
            const float bc2 = 1.0f - std::pow(config.beta2, static_cast<float>(step));
            k = 0;
            for (attn::Param& q : p.all()) {
                gpu::adamw_update(w[k].data(), g[k].data(), m[k].data(), v[k].data(), q.value.size(), opt.lr_at(step), config.beta1,
                                  config.beta2, config.eps, q.decay ? config.weight_decay : 0.0f, bc1, bc2);
                const std::size_t r = q.value.shape(0), c = q.value.shape(1);
                same = same && same_bits(gpu::to_host(w[k], r, c), q.value) &&
                       same_bits(gpu::to_host(m[k], r, c), opt.first_moments()[k]) &&
                       same_bits(gpu::to_host(v[k], r, c), opt.second_moments()[k]);
                if (step == 3) check_close("adamw_update " + q.name + " after 3 steps (bits expected)", gpu::to_host(w[k], r, c), q.value, 0, 0);
                ++k;
            }
        }
        check("adamw_update: w, m, v the same bits as attn::AdamW over 3 steps", same);
    }
}
// The GPU model trained by the CPU's loop: 20 steps of each configuration give the CPU model's losses
// to 1e-4 relative (the steps compound fp32 differences of cuBLAS against OpenBLAS), and the same seed gives
// the same losses twice, bit for bit (no float atomics anywhere).
void gpu_model_training(bool quick) {
    std::cout << "the GPU model against the CPU model: " << (quick ? 2 : 20) << " training steps (GpuModel, train_loop)\n";
    const std::size_t V = 50, T = quick ? 16 : 64, B = 4;
    const attn::BatchSampler random_tokens = [&](attn::Rng& r, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(B * T), targets.resize(B * T);
        for (auto& t : tokens) t = static_cast<int>(r.below(V));
        for (auto& t : targets) t = static_cast<int>(r.below(V));
    };
    attn::ModelConfig full{.vocab = V, .max_T = T, .d_model = 32, .n_heads = 4, .d_ff = 128, .norm = attn::Norm::pre};
    attn::ModelConfig uniform{.vocab = V, .max_T = T, .d_model = 32, .n_heads = 1, .mixer = attn::Mixer::uniform};
    attn::ModelConfig rope = full, alibi = full, post = full;
    rope.positions = attn::Positions::rope, alibi.positions = attn::Positions::alibi, post.norm = attn::Norm::post;
    const attn::ModelConfig gpt2 = attn::gpt2_config({.vocab = V, .max_T = T, .d_model = 32, .n_heads = 4, .n_layers = 2});
    const std::vector<std::pair<std::string, attn::ModelConfig>> configs = {
        {"the ladder's full block", full}, {"uniform average", uniform}, {"RoPE", rope}, {"ALiBi", alibi}, {"post-norm", post}, {"GPT-2, 2 blocks", gpt2}};
    attn::TrainConfig tc;
    tc.steps = quick ? 2 : 20, tc.batch = B, tc.seed = 3, tc.progress = false;
    for (const auto& [name, config] : configs) {
        if (quick && name != "the ladder's full block") continue;  // compute-sanitizer runs kernels 10-100x slower
        for (gpu::AttentionPath path : {gpu::AttentionPath::automatic, gpu::AttentionPath::materialised}) {
            attn::fast::Model cpu(config, 1);
            gpu::GpuModel dev(config, 1, {.attention = path});
            const attn::TrainResult a = attn::train_loop(cpu, random_tokens, B, T, tc);
            const attn::TrainResult b = attn::train_loop(dev, random_tokens, B, T, tc);
            double worst = 0;
            for (std::size_t i = 0; i < a.losses.size(); ++i) worst = std::max(worst, std::fabs(b.losses[i] - a.losses[i]) / a.losses[i]);
            check(name + ", " + gpu::attention_path_name(dev.attention_path(B, T)) + ": losses within 1e-4 relative",
                  b.losses.size() == static_cast<std::size_t>(tc.steps) && worst <= 1e-4, "worst " + std::to_string(worst));
        }
    }
    if (quick) {  // one graph replay of the full block, so that compute-sanitizer sees the graphs' launches too
        gpu::GpuModel eager(full, 1), graph(full, 1, {.launches = gpu::Launches::graph});
        const attn::TrainResult e = attn::train_loop(eager, random_tokens, B, T, tc), g = attn::train_loop(graph, random_tokens, B, T, tc);
        check("the ladder's full block: recorded as CUDA Graphs, the eager losses, bit for bit", e.losses == g.losses);
        return;
    }
    gpu::GpuModel one(full, 1), two(full, 1);
    const attn::TrainResult a = attn::train_loop(one, random_tokens, B, T, tc), b = attn::train_loop(two, random_tokens, B, T, tc);
    check("the same seed twice: the same losses, bit for bit", a.losses == b.losses);
    for (const auto& [name, config] : configs) {  // each step's forward and backward replayed as CUDA Graphs
        gpu::GpuModel eager(config, 1), graph(config, 1, {.launches = gpu::Launches::graph});
        const attn::TrainResult e = attn::train_loop(eager, random_tokens, B, T, tc), g = attn::train_loop(graph, random_tokens, B, T, tc);
        check(name + ": recorded as CUDA Graphs, the eager losses, bit for bit", e.losses == g.losses);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const gpu::DeviceInfo info = gpu::query_device();
    if (info.count == 0) {
        std::cout << "SKIPPED: no CUDA device was found (" << info.why_none << ")\n";
        return 77;
    }
    std::cout << "device: " << info.name << ", compute capability " << info.cc_major << "." << info.cc_minor << ", "
              << info.sm_count << " SMs, " << info.clock_khz / 1000 << " MHz, " << info.memory_bytes / (1 << 20) << " MiB\n";
    try {
        attn::Rng rng(1);

        std::cout << "row softmax (softmax_rows)\n";
        for (const auto& [rows, cols] : {std::pair{1, 1}, {3, 7}, {64, 64}, {128, 1000}, {17, 4096}}) {
            if (quick && rows * cols > 5000) continue;
            const Mat scores = rng.normal_mat(rows, cols) * 8.0f;
            Mat out = Mat::from_shape(scores.shape());
            out.fill(std::numeric_limits<float>::quiet_NaN());
            gpu::softmax_rows(scores.data(), out.data(), rows, cols);
            check_close("softmax_rows (" + std::to_string(rows) + ", " + std::to_string(cols) + ")", out,
                        attn::softmax_rows(scores), 1e-6, 1e-5);
        }

        std::cout << "attention v1, v2, v3 against attn::fast::causal_attention_forward\n";
        // Every compiled width of v3 (d_head padded to 16, 32, 64, 128) at a T that is not a multiple of its 64-row
        // tile appears among the small shapes, which `--quick` keeps for compute-sanitizer.
        const std::vector<std::array<int, 4>> shapes = {{1, 1, 1, 8},    {2, 7, 2, 16},    {1, 64, 1, 24},   {1, 65, 2, 8},
                                                        {2, 130, 4, 64}, {1, 70, 1, 100},  {1, 200, 2, 128}, {2, 1000, 8, 64},
                                                        {1, 777, 3, 40}};
        for (const auto& [B, T, h, dh] : shapes) {
            if (quick && T > 130) continue;
            const std::size_t N = static_cast<std::size_t>(B) * T, d = static_cast<std::size_t>(h) * dh;
            const Mat q = rng.normal_mat(N, d), k = rng.normal_mat(N, d), v = rng.normal_mat(N, d);
            attn::fast::AttentionCache cache;
            const Mat ref = attn::fast::causal_attention_forward(q, k, v, B, T, h, cache);
            for (AttentionVersion version : {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3}) {
                const std::size_t v3_bytes = gpu::v3_shared_bytes(gpu::v3_padded_d_head(dh));
                if (version == AttentionVersion::v3 && v3_bytes > gpu::device_shared_bytes_per_block()) {
                    // a card with less shared memory a block than v3's tile needs (a consumer card at d_head 65-128):
                    // the launch is refused, naming the kernel, never run past the limit
                    check_throws<attn::Error>("attention v3 " + shape4(B, T, h, dh) + " refused: needs " + std::to_string(v3_bytes) +
                                                  " B of shared memory, the card allows " +
                                                  std::to_string(gpu::device_shared_bytes_per_block()),
                                              [&] { attention_on_gpu(version, q, k, v, B, T, h); }, "attention_v3_kernel");
                    continue;
                }
                check_close(std::string("attention ") + gpu::version_name(version) + " " + shape4(B, T, h, dh),
                            attention_on_gpu(version, q, k, v, B, T, h), ref, 1e-5, 1e-4);
            }
        }
        // v2 takes any d_head (cuBLAS); v1 and v3 refuse more than kMaxDHead
        {
            const int B = 1, T = 50, h = 1, dh = 200;
            const Mat q = rng.normal_mat(T, dh), k = rng.normal_mat(T, dh), v = rng.normal_mat(T, dh);
            attn::fast::AttentionCache cache;
            check_close("attention v2 " + shape4(B, T, h, dh), attention_on_gpu(AttentionVersion::v2, q, k, v, B, T, h),
                        attn::fast::causal_attention_forward(q, k, v, B, T, h, cache), 1e-5, 1e-4);
            check_throws<attn::Error>("attention v3 refuses d_head = 200",
                                      [&] { attention_on_gpu(AttentionVersion::v3, q, k, v, B, T, h); }, "d_head must be at most 128");
        }

        std::cout << "the attention's training kernels (attention_train.hpp): materialised and flash, forward and backward,\n"
                  << "against attn::fast::causal_attention_forward / _backward\n";
        // The flash kernels at every compiled width (d_head 8 and 16 → 16, 32, 64, 100 and 128 → 128) with T = 37 or
        // 70, not multiples of the 64-row tile: all within --quick, so compute-sanitizer sees each instantiation.
        for (const TrainCase& c : std::vector<TrainCase>{{2, 2, 37, 8, 8},
                                                         {1, 1, 70, 32, 32},
                                                         {1, 1, 70, 64, 64, true, true, true, true},
                                                         {1, 1, 70, 100, 100},
                                                         {1, 1, 37, 128, 128},
                                                         {2, 2, 70, 8, 12, true, false, true, true},
                                                         {2, 2, 70, 8, 8, false},
                                                         {2, 2, 70, 8, 8, false, false},
                                                         {2, 2, 130, 16, 16, true, true, false},
                                                         {1, 4, 257, 64, 64, true, true, true, true},
                                                         {1, 2, 200, 128, 128},
                                                         {2, 3, 300, 40, 40, true, true, true, true}}) {
            if (quick && c.T > 130) continue;
            check_attention_train(c, rng);
        }
        if (!quick) {
            std::cout << "the attention's training kernels: time (no assertion)\n";
            for (int T : {1024, 4096}) time_attention_train(16, T, 64);
        }

        std::cout << "LayerNorm, GELU, linear, bias and residual adds against the CPU layers\n";
        attn::Parameters p;
        for (const auto& [N, d] : {std::pair{1, 1}, {13, 50}, {512, 512}, {100, 3072}}) {
            if (quick && N * d > 1000) continue;
            const Mat x = rng.normal_mat(N, d) * 2.0f + 3.0f;
            const std::string tag = "(" + std::to_string(N) + ", " + std::to_string(d) + ")";
            attn::Param& gain = p.normal("g" + tag, 1, d, 1.0f, rng);
            attn::Param& bias = p.normal("b" + tag, 1, d, 1.0f, rng);
            attn::fast::LayerNormCache cache;
            const gpu::DeviceBuffer dx = gpu::to_device(x, "x"), dg = gpu::to_device(gain.value, "gain"),
                                    db = gpu::to_device(bias.value, "bias");
            gpu::DeviceBuffer dy(x.size(), "y");
            dy.poison();
            gpu::layernorm(dx.data(), dg.data(), db.data(), dy.data(), N, d);
            check_close("layernorm " + tag, gpu::to_host(dy, N, d), attn::fast::layernorm_forward(x, gain, bias, cache), 1e-5, 1e-5);
            dy.poison();
            gpu::gelu(dx.data(), dy.data(), x.size());
            check_close("gelu " + tag, gpu::to_host(dy, N, d), spec::gelu(x), 1e-6, 1e-6);  // erff on both sides
            gpu::DeviceBuffer dz = gpu::to_device(x, "z");
            gpu::bias_add(dz.data(), db.data(), N, d);
            check_close("bias_add " + tag, gpu::to_host(dz, N, d), Mat(x + bias.value), 0, 0);
            dy.poison();
            gpu::residual_add(dx.data(), dz.data(), dy.data(), x.size());
            check_close("residual_add " + tag, gpu::to_host(dy, N, d), Mat(x + (x + bias.value)), 0, 0);
        }
        for (const auto& [N, in, out] : {std::array{1, 1, 1}, {7, 5, 3}, {512, 512, 2048}, {300, 2048, 512}}) {
            if (quick && N * in > 1000) continue;
            const std::string tag = "(" + std::to_string(N) + ", " + std::to_string(in) + ") · (" + std::to_string(in) + ", " +
                                    std::to_string(out) + ")";
            const Mat x = rng.normal_mat(N, in);
            attn::Param& W = p.normal("W" + tag, in, out, 1.0f / std::sqrt(static_cast<float>(in)), rng);
            attn::Param& b = p.normal("bW" + tag, 1, out, 1.0f, rng);
            const gpu::DeviceBuffer dx = gpu::to_device(x, "x"), dW = gpu::to_device(W.value, "W"), db = gpu::to_device(b.value, "b");
            gpu::DeviceBuffer dy(static_cast<std::size_t>(N) * out, "y");
            dy.poison();
            gpu::linear(dx.data(), dW.data(), db.data(), dy.data(), N, in, out);
            check_close("linear x W + b " + tag, gpu::to_host(dy, N, out), attn::fast::linear_forward(x, W, &b), 1e-5, 1e-4);
        }

        std::cout << "the pre-norm block and a stack of blocks against attn::fast::Model (same weights; the block poisons its\n"
                  << "activations before each forward)\n";
        for (const auto& [d, h, B, T] : {std::array{32, 4, 2, 20}, {512, 8, 2, 256}, {256, 2, 1, 300}}) {
            if (quick && d > 32) continue;
            const attn::ModelConfig config = attn::gpt2_config({.vocab = 16, .max_T = static_cast<std::size_t>(T),
                                                                .d_model = static_cast<std::size_t>(d), .n_heads = static_cast<std::size_t>(h), .n_layers = 2});
            attn::fast::Model cpu(config, 7);
            perturb(cpu, rng);
            gpu::GpuTransformer gpu_model(cpu);
            const Mat x = rng.normal_mat(static_cast<std::size_t>(B * T), d);
            const std::string tag = "d = " + std::to_string(d) + ", h = " + std::to_string(h) + ", B·T = " +
                                    std::to_string(B) + "·" + std::to_string(T);
            const Mat y0 = cpu.block_forward(0, x, B, T);
            for (AttentionVersion version : {AttentionVersion::v1, AttentionVersion::v2, AttentionVersion::v3})
                check_close(std::string("block 0, attention ") + gpu::version_name(version) + ", " + tag,
                            gpu_model.block_forward(0, x, B, T, version), y0, 1e-4, 1e-4);
            check_close("stack of 2 blocks (v3), " + tag, gpu_model.forward(x, B, T), cpu.block_forward(1, y0, B, T), 2e-4, 2e-4);
        }

        train_layer_checks(rng, quick);
        gpu_model_training(quick);

        std::cout << "memory: the ledger, the simulated limit, a real out-of-memory\n";
        if (!quick) {
            gpu::MemoryLedger& book = gpu::ledger();
            const std::size_t held = book.current();
            {
                gpu::DeviceBuffer a(1 << 20, "a");
                check("a DeviceBuffer of 4 MiB is on the ledger", book.current() == held + (std::size_t{4} << 20));
            }
            check("and off it once freed", book.current() == held);
            const int BH = 8, T = 4096, dh = 64;  // scores: 8 · 4096² · 4 B = 512 MiB
            gpu::DeviceBuffer q(static_cast<std::size_t>(BH) * T * dh, "q"), out(static_cast<std::size_t>(BH) * T * dh, "out");
            q.zero();
            book.set_limit(book.current() + (std::size_t{256} << 20));
            check_throws<gpu::OutOfMemory>("v2 past a 256 MiB limit: OutOfMemory",
                                           [&] { gpu::attention_v2(q.data(), q.data(), q.data(), out.data(), BH, T, dh); },
                                           "out of memory");
            bool v3_ran = true;
            try {
                gpu::attention_v3(q.data(), q.data(), q.data(), out.data(), BH, T, dh);  // allocates nothing
                gpu::synchronize();
            } catch (const std::exception&) {
                v3_ran = false;
            }
            check("v3 runs within the same limit (it allocates nothing)", v3_ran);
            book.set_limit(0);
            check_throws<gpu::OutOfMemory>(
                "a buffer twice the device's memory: cudaMalloc fails, OutOfMemory",
                [&] { gpu::DeviceBuffer huge(info.memory_bytes / 2, "a buffer of twice the device"); }, "cudaMalloc");
            gpu::DeviceBuffer after(16, "after");  // the failed cudaMalloc left no sticky error
            after.zero();
            gpu::synchronize();
            check("the device works after the failed allocation", true);
        }
    } catch (const std::exception& e) {
        std::cout << "  FAIL: " << e.what() << "\n";
        ++failures;
    }
    std::cout << (failures ? "FAILED: " + std::to_string(failures) + " check(s)" : std::string("all GPU checks passed")) << "\n";
    return failures ? 1 : 0;
}
