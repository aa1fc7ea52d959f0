// The layers' training kernels (common/gpu/train_layers.hpp, train_layer_kernels.cuh) on the CPU, through the
// emulator (tests/common/gpu_train_layers_on_cpu.cpp), each against the CPU library's gradient-checked layers:
// LayerNorm forward/backward, GELU's backward, the bias's and the embeddings' gradients, the fused
// cross-entropy, RoPE, AdamW and the clip's Σ x². Odd shapes (N = 45, d = 20, V = 37: no multiple of the warp
// or the block), parameter gradients that start non-zero (the backward must add, not overwrite), outputs
// poisoned with NaN before the kernel writes them, and every call twice (the same bits: no atomics).
// tests/gpu/test_gpu.cpp runs the same comparisons on a device.
//
// Tolerances: where the CPU and the kernel do the same float operations in the same order (the embedding's
// sums, RoPE, AdamW, the elementwise adds) the test asks for the same bits. Elsewhere they differ in the
// order of their sums (warp butterflies and 8 row groups against one loop; float against the CPU's double
// mean) and in exp (expf against the CPU's polynomial): a few ulps of values of order 1, so 1e-5 absolute
// plus 1e-5 relative is ~100× that, and far below what a wrong index or a missing term gives (order 0.1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../spec.hpp"
#include "core/error.hpp"
#include "train/optim.hpp"
#include "math/positions.hpp"
#include "core/rng.hpp"
#include "buffer.hpp"
#include "fast/layers.hpp"
#include "launch.hpp"
#include "train_layers.hpp"
#include "transformer_gpu.hpp"
// Last, after every library header: the emulator's macros, then the kernels' header for its launch shapes.
#include "cuda_on_cpu.hpp"
#include "train_layer_kernels.cuh"

using attn::Mat;
namespace gpu = attn::gpu;

namespace {
using spec::same_bits;

// Every entry within abs + rel·|ref| (a NaN fails); INFO names the worst.
void require_close(const std::string& what, const Mat& got, const Mat& ref, double abs_tol, double rel_tol) {
    REQUIRE(got.shape() == ref.shape());
    double worst = 0;
    bool ok = true;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(got.data()[i]) - ref.data()[i]);
        if (!(diff <= abs_tol + rel_tol * std::fabs(ref.data()[i]))) ok = false;
        if (!(diff <= worst)) worst = diff;
    }
    INFO(what << ": max |gpu − cpu| = " << worst);
    CHECK(ok);
}

gpu::DeviceBuffer poisoned(std::size_t n, const std::string& what) {
    gpu::DeviceBuffer b(n, what);
    b.poison();
    return b;
}

gpu::DeviceInts to_device_ints(const std::vector<int>& v, const std::string& what) {
    gpu::DeviceInts d(v.size(), what);
    d.upload(v.data(), v.size());
    return d;
}

}  // namespace

TEST_CASE("gpu train: LayerNorm forward keeps mean and rstd, its backward writes dx and adds dgain, dbias", "[gpu-host][gpu-train]") {
    attn::Rng rng(11);
    // d = 70: 3 column blocks; N = 600: three chunks of rows (256, 256, 88), summed apart and combined in order
    for (const auto& [N, d] : {std::pair{45, 20}, {9, 70}, {600, 33}}) {
        INFO("x (" << N << ", " << d << ")");
        attn::Parameters p;
        attn::Param& gain = p.normal("gain", 1, d, 1.0f, rng);
        attn::Param& bias = p.normal("bias", 1, d, 1.0f, rng);
        gain.grad = rng.normal_mat(1, d), bias.grad = rng.normal_mat(1, d);  // non-zero: the backward must add
        const Mat dgain0 = gain.grad, dbias0 = bias.grad;
        const Mat x = rng.normal_mat(N, d) * 2.0f + 3.0f, dy = rng.normal_mat(N, d);
        attn::fast::LayerNormCache cache;
        const Mat y_cpu = attn::fast::layernorm_forward(x, gain, bias, cache);
        const Mat dx_cpu = attn::fast::layernorm_backward(dy, cache, gain, bias);

        const gpu::DeviceBuffer gx = gpu::to_device(x, "x"), gg = gpu::to_device(gain.value, "gain"),
                                gb = gpu::to_device(bias.value, "bias"), gdy = gpu::to_device(dy, "dy");
        gpu::DeviceBuffer gy = poisoned(x.size(), "y"), gmean = poisoned(N, "mean"), grstd = poisoned(N, "rstd");
        gpu::layernorm_forward(gx.data(), gg.data(), gb.data(), gy.data(), gmean.data(), grstd.data(), N, d);
        require_close("y", gpu::to_host(gy, N, d), y_cpu, 1e-5, 1e-5);
        Mat mean_cpu = Mat::from_shape({static_cast<std::size_t>(N), 1});
        for (int i = 0; i < N; ++i) {
            double s = 0;
            for (int j = 0; j < d; ++j) s += x(i, j);
            mean_cpu(i, 0) = static_cast<float>(s / d);
        }
        require_close("mean", gpu::to_host(gmean, N, 1), mean_cpu, 1e-5, 1e-5);
        Mat rstd_cpu = Mat::from_shape({static_cast<std::size_t>(N), 1});
        for (int i = 0; i < N; ++i) rstd_cpu(i, 0) = cache.rstd(i);
        require_close("rstd", gpu::to_host(grstd, N, 1), rstd_cpu, 1e-5, 1e-5);

        gpu::DeviceBuffer gdx = poisoned(x.size(), "dx"), gdg = gpu::to_device(dgain0, "dgain"), gdb = gpu::to_device(dbias0, "dbias");
        gpu::layernorm_backward(gdy.data(), gx.data(), gg.data(), gmean.data(), grstd.data(), gdx.data(), gdg.data(), gdb.data(),
                                N, d);
        const Mat dx = gpu::to_host(gdx, N, d), dg = gpu::to_host(gdg, 1, d), db = gpu::to_host(gdb, 1, d);
        require_close("dx", dx, dx_cpu, 1e-5, 1e-5);
        require_close("dgain (added to its start)", dg, gain.grad, 1e-5, 1e-5);
        require_close("dbias (added to its start)", db, bias.grad, 1e-5, 1e-5);

        // The same call again, from the same start: the same bits.
        gdx.poison();
        gdg.upload(dgain0.data(), dgain0.size()), gdb.upload(dbias0.data(), dbias0.size());
        gpu::layernorm_backward(gdy.data(), gx.data(), gg.data(), gmean.data(), grstd.data(), gdx.data(), gdg.data(), gdb.data(),
                                N, d);
        CHECK(same_bits(gpu::to_host(gdx, N, d), dx));
        CHECK(same_bits(gpu::to_host(gdg, 1, d), dg));
        CHECK(same_bits(gpu::to_host(gdb, 1, d), db));
    }
}

TEST_CASE("gpu train: GELU backward, bias backward, add_inplace, scale_inplace", "[gpu-host][gpu-train]") {
    attn::Rng rng(12);
    const int rows = 45, cols = 37;
    const Mat x = rng.normal_mat(rows, cols) * 3.0f, dy = rng.normal_mat(rows, cols);
    const gpu::DeviceBuffer gx = gpu::to_device(x, "x"), gdy = gpu::to_device(dy, "dy");

    // exp and erf are expf/erff on both sides here (the reference pair), a few ulps apart on a device
    gpu::DeviceBuffer gdx = poisoned(x.size(), "dx");
    gpu::gelu_backward(gx.data(), gdy.data(), gdx.data(), x.size());
    const Mat dx = gpu::to_host(gdx, rows, cols);
    require_close("gelu_backward", dx, spec::gelu_backward(x, dy), 1e-6, 1e-5);
    gpu::DeviceBuffer inplace = gpu::to_device(dy, "dy, overwritten by dx");  // dx may be dy
    gpu::gelu_backward(gx.data(), inplace.data(), inplace.data(), x.size());
    CHECK(same_bits(gpu::to_host(inplace, rows, cols), dx));

    // dbias += Σ_rows dy: the CPU's add_row_sums, row after row
    Mat dbias_cpu = rng.normal_mat(1, cols);
    const Mat dbias0 = dbias_cpu;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) dbias_cpu(0, j) += dy(i, j);
    gpu::DeviceBuffer gdb = gpu::to_device(dbias0, "dbias");
    gpu::bias_backward(gdy.data(), gdb.data(), rows, cols);
    const Mat db = gpu::to_host(gdb, 1, cols);
    require_close("bias_backward (added to its start)", db, dbias_cpu, 1e-5, 1e-5);
    gdb.upload(dbias0.data(), dbias0.size());
    gpu::bias_backward(gdy.data(), gdb.data(), rows, cols);
    CHECK(same_bits(gpu::to_host(gdb, 1, cols), db));
    // one row, and rows fewer than the 8 row groups: the groups without a row add 0
    gdb.upload(dbias0.data(), dbias0.size());
    gpu::bias_backward(gdy.data(), gdb.data(), 3, cols);
    Mat three = dbias0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < cols; ++j) three(0, j) += dy(i, j);
    require_close("bias_backward, 3 rows", gpu::to_host(gdb, 1, cols), three, 1e-6, 1e-6);
    // 700 rows: three chunks (256, 256, 188), each summed apart, then added in chunk order; twice the same bits
    {
        const int many = 700;
        const Mat dy_many = rng.normal_mat(many, cols);
        Mat expect = dbias0;
        for (int i = 0; i < many; ++i)
            for (int j = 0; j < cols; ++j) expect(0, j) += dy_many(i, j);
        const gpu::DeviceBuffer gdy_many = gpu::to_device(dy_many, "dy (700 rows)");
        gdb.upload(dbias0.data(), dbias0.size());
        gpu::bias_backward(gdy_many.data(), gdb.data(), many, cols);
        const Mat got = gpu::to_host(gdb, 1, cols);
        require_close("bias_backward, 700 rows in chunks", got, expect, 1e-5, 1e-5);
        gdb.upload(dbias0.data(), dbias0.size());
        gpu::bias_backward(gdy_many.data(), gdb.data(), many, cols);
        CHECK(same_bits(gpu::to_host(gdb, 1, cols), got));
        // with the caller's scratch (a layer's own): the same bits, and allocated once, at the first call
        gpu::DeviceBuffer scratch;
        for (int call = 0; call < 2; ++call) {
            const long long allocations = gpu::device_work().allocations;
            gdb.upload(dbias0.data(), dbias0.size());
            gpu::bias_backward(gdy_many.data(), gdb.data(), many, cols, &scratch);
            CHECK(same_bits(gpu::to_host(gdb, 1, cols), got));
            CHECK(gpu::device_work().allocations - allocations == (call == 0 ? 1 : 0));
        }
    }

    // y += x and x *= s: one float operation per element, the same bits as the CPU's
    gpu::DeviceBuffer gyy = gpu::to_device(dy, "y");
    gpu::add_inplace(gyy.data(), gx.data(), x.size());
    CHECK(same_bits(gpu::to_host(gyy, rows, cols), Mat(dy + x)));
    gpu::scale_inplace(gyy.data(), x.size(), 0.37f);
    CHECK(same_bits(gpu::to_host(gyy, rows, cols), Mat((dy + x) * 0.37f)));
}

TEST_CASE("gpu train: sum_squares is the clip's Σ g² in double, the same bits on every call", "[gpu-host][gpu-train]") {
    attn::Rng rng(13);
    // (the emulator is slow: past 65536 elements, where the 256 blocks cap and each thread strides, only on a device)
    for (const std::size_t n : {std::size_t{1}, std::size_t{900}, std::size_t{4001}}) {
        INFO("n = " << n);
        const Mat g = rng.normal_mat(1, n);
        double cpu = 0;
        for (float v : g) cpu += static_cast<double>(v) * v;  // attn::clip_grad_norm's loop
        const gpu::DeviceBuffer gg = gpu::to_device(g, "g");
        const double first = gpu::sum_squares(gg.data(), n);
        CHECK(std::fabs(first - cpu) <= 1e-12 * cpu);  // double sums of n terms in two orders: n · 2⁻⁵³ relative
        CHECK(gpu::sum_squares(gg.data(), n) == first);
    }
    CHECK(gpu::sum_squares(nullptr, 0) == 0.0);
}

TEST_CASE("gpu train: TensorGroup's clipping factor is the host's, from sum_squares in the tensors' order, and the update folds it in",
          "[gpu-host][gpu-train]") {
    attn::Rng rng(21);
    const std::vector<std::size_t> sizes = {300, 0, 1, 777};
    std::vector<Mat> g;
    std::vector<gpu::DeviceBuffer> dev;
    std::vector<float*> ptrs;
    std::vector<gpu::TensorGroup::Tensor> tensors;
    for (std::size_t n : sizes) {
        g.push_back(rng.normal_mat(1, n));
        dev.push_back(gpu::DeviceBuffer(n, "g"));
        if (n > 0) dev.back().upload(g.back().data(), n);
        ptrs.push_back(dev.back().data());
        // the clip reads only g: w, m and v point at it too, and are never touched here
        tensors.push_back({.w = ptrs.back(), .g = ptrs.back(), .m = ptrs.back(), .v = ptrs.back(), .n = n, .decay = false});
    }
    // The host's sum, as GpuModel added it before the factor moved to the device: each tensor's sum_squares in turn.
    double sq = 0;
    for (std::size_t t = 0; t < sizes.size(); ++t) sq += gpu::sum_squares(ptrs[t], sizes[t]);
    const double norm = std::sqrt(sq);
    gpu::TensorGroup group(tensors);
    float scale = 0;
    for (const double c : {0.5 * norm, 2.0 * norm, 0.1}) {
        INFO("clip " << c << ", norm " << norm);
        group.clip_factor(c);  // the first call makes the scratch
        const long long before = gpu::device_work().kernels, allocations = gpu::device_work().allocations;
        const float* factor = group.clip_factor(c);
        CHECK(gpu::device_work().kernels - before == 2);  // every tensor's sums, then the factor, whatever the tensors
        CHECK(gpu::device_work().allocations == allocations);
        std::memcpy(&scale, factor, sizeof(float));  // the emulator's device memory is the host's
        CHECK(scale == (norm > c ? static_cast<float>(c / norm) : 1.0f));  // bit for bit: attn::clip_grad_norm's formula
    }
    // adamw_update reading the factor gives the bits of scaling the gradient first and then updating.
    const float* factor = group.clip_factor(0.5 * norm);
    const std::size_t n = sizes[3];
    gpu::DeviceBuffer w1 = gpu::to_device(rng.normal_mat(1, n), "w"), m1(n, "m"), v1(n, "v");
    m1.zero(), v1.zero();
    Mat w_host = gpu::to_host(w1, 1, n);
    gpu::DeviceBuffer w2 = gpu::to_device(w_host, "w"), m2(n, "m"), v2(n, "v"), g2 = gpu::to_device(g[3], "g scaled");
    m2.zero(), v2.zero();
    std::memcpy(&scale, factor, sizeof(float));  // the emulator's device memory is the host's
    REQUIRE(scale < 1.0f);
    gpu::scale_inplace(g2.data(), n, scale);
    gpu::adamw_update(w1.data(), ptrs[3], m1.data(), v1.data(), n, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.1f, 0.05f, factor);
    gpu::adamw_update(w2.data(), g2.data(), m2.data(), v2.data(), n, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.1f, 0.05f);
    CHECK(same_bits(gpu::to_host(w1, 1, n), gpu::to_host(w2, 1, n)));
    CHECK(same_bits(gpu::to_host(m1, 1, n), gpu::to_host(m2, 1, n)));
    CHECK_FALSE(same_bits(gpu::to_host(w1, 1, n), w_host));  // it moved
}

TEST_CASE("gpu train: TensorGroup zeroes every gradient and updates every tensor in one launch each, adamw_update's bits",
          "[gpu-host][gpu-train]") {
    attn::Rng rng(22);
    // sizes on both sides of a 256-thread block, and an empty tensor; decay on some
    const std::vector<std::size_t> sizes = {300, 0, 1, 777, 256};
    const std::vector<bool> decays = {true, false, false, true, false};
    struct Buffers {
        gpu::DeviceBuffer w, g, m, v;
    };
    std::vector<Buffers> one, each;  // updated by the group / by adamw_update tensor by tensor
    std::vector<gpu::TensorGroup::Tensor> group_tensors;
    for (std::size_t t = 0; t < sizes.size(); ++t) {
        const std::size_t n = sizes[t];
        const Mat w = rng.normal_mat(1, n), g = rng.normal_mat(1, n), m = rng.normal_mat(1, n) * 0.1f, v = xt::abs(rng.normal_mat(1, n)) * 0.01f;
        for (auto* set : {&one, &each}) {
            set->push_back({gpu::DeviceBuffer(n, "w"), gpu::DeviceBuffer(n, "g"), gpu::DeviceBuffer(n, "m"), gpu::DeviceBuffer(n, "v")});
            if (n > 0) set->back().w.upload(w.data(), n), set->back().g.upload(g.data(), n), set->back().m.upload(m.data(), n),
                       set->back().v.upload(v.data(), n);
        }
        Buffers& b = one.back();
        group_tensors.push_back({.w = b.w.data(), .g = b.g.data(), .m = b.m.data(), .v = b.v.data(), .n = n, .decay = decays[t]});
    }
    gpu::TensorGroup group(group_tensors);
    const float scale = 0.37f;
    gpu::DeviceBuffer dscale(1, "scale");
    dscale.upload(&scale, 1);
    for (const float* grad_scale : {static_cast<const float*>(nullptr), static_cast<const float*>(dscale.data())}) {
        long long before = gpu::device_work().kernels;
        group.adamw(3e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.19f, 0.0975f, grad_scale);
        CHECK(gpu::device_work().kernels - before == 1);
        for (std::size_t t = 0; t < sizes.size(); ++t)
            gpu::adamw_update(each[t].w.data(), each[t].g.data(), each[t].m.data(), each[t].v.data(), sizes[t], 3e-3f, 0.9f, 0.95f, 1e-8f,
                              decays[t] ? 0.1f : 0.0f, 0.19f, 0.0975f, grad_scale);
        for (std::size_t t = 0; t < sizes.size(); ++t) {
            INFO("tensor " << t << " of " << sizes[t] << " elements");
            for (auto member : {&Buffers::w, &Buffers::m, &Buffers::v})
                CHECK(same_bits(gpu::to_host(one[t].*member, 1, sizes[t]), gpu::to_host(each[t].*member, 1, sizes[t])));
        }
    }
    const long long before = gpu::device_work().kernels, fills = gpu::device_work().fills;
    group.zero_grads();
    CHECK(gpu::device_work().kernels - before == 1);
    CHECK(gpu::device_work().fills == fills);
    for (std::size_t t = 0; t < sizes.size(); ++t) CHECK(same_bits(gpu::to_host(one[t].g, 1, sizes[t]), Mat(xt::zeros<float>({std::size_t{1}, sizes[t]}))));
    CHECK_THROWS_WITH(group.adamw(1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 0.0f, 0.001f), Catch::Contains("bc1 = 0"));
}

TEST_CASE("gpu train: embeddings forward (token + learned + fixed rows) and backward (grouped by token)", "[gpu-host][gpu-train]") {
    attn::Rng rng(14);
    const int B = 3, T = 15, d = 20, V = 37, N = B * T;
    std::vector<int> tokens(N);
    for (int& t : tokens) t = static_cast<int>(rng.below(12)) * 3;  // repeats, gaps: 0, 3, …, 33 of 37
    tokens[4] = V - 1;
    attn::Parameters p;
    attn::Param& wte = p.normal("wte", V, d, 1.0f, rng);
    attn::Param& wpe = p.normal("wpe", T + 5, d, 1.0f, rng);  // a table longer than T, as max_T ≥ T
    wte.grad = rng.normal_mat(V, d), wpe.grad = rng.normal_mat(T + 5, d);
    const Mat dwte0 = wte.grad, dwpe0 = wpe.grad;
    const Mat table = attn::sinusoidal_table(T, d);
    const gpu::DeviceInts gtok = to_device_ints(tokens, "tokens");
    const gpu::DeviceBuffer gwte = gpu::to_device(wte.value, "wte"), gwpe = gpu::to_device(wpe.value, "wpe"),
                            gtable = gpu::to_device(table, "table");

    SECTION("group_tokens: distinct tokens ascending, positions ascending within each") {
        const gpu::TokenGroups groups = gpu::group_tokens(tokens);
        std::vector<int> token(groups.groups), start(groups.groups + 1), position(N);
        groups.token.download(token.data(), token.size());
        groups.start.download(start.data(), start.size());
        groups.position.download(position.data(), position.size());
        CHECK(start.front() == 0);
        CHECK(start.back() == N);
        for (int g = 0; g < groups.groups; ++g) {
            if (g > 0) CHECK(token[g] > token[g - 1]);
            CHECK(start[g + 1] > start[g]);
            for (int k = start[g]; k < start[g + 1]; ++k) {
                CHECK(tokens[position[k]] == token[g]);
                if (k > start[g]) CHECK(position[k] > position[k - 1]);
            }
        }
    }
    SECTION("forward: the CPU's sums in the CPU's order, the same bits") {
        Mat ref = attn::fast::embedding_forward(tokens, T, wte, &wpe);
        for (int n = 0; n < N; ++n)
            for (int j = 0; j < d; ++j) ref(n, j) += table(n % T, j);  // attn::fast::Model's sinusoidal add
        gpu::DeviceBuffer gxx = poisoned(static_cast<std::size_t>(N) * d, "x");
        gpu::embedding_forward(gtok.data(), gwte.data(), gwpe.data(), gtable.data(), gxx.data(), B, T, d, V);
        CHECK(same_bits(gpu::to_host(gxx, N, d), ref));
        gxx.poison();
        gpu::embedding_forward(gtok.data(), gwte.data(), nullptr, nullptr, gxx.data(), B, T, d, V);
        CHECK(same_bits(gpu::to_host(gxx, N, d), attn::fast::embedding_forward(tokens, T, wte, nullptr)));
        // a token outside the vocabulary: its row is NaN (a kernel cannot throw), the others are written
        std::vector<int> bad = tokens;
        bad[7] = V;
        const gpu::DeviceInts gbad = to_device_ints(bad, "bad tokens");
        gpu::embedding_forward(gbad.data(), gwte.data(), nullptr, nullptr, gxx.data(), B, T, d, V);
        const Mat xb = gpu::to_host(gxx, N, d);
        CHECK(std::isnan(xb(7, 0)));
        CHECK(xb(6, 0) == wte.value(tokens[6], 0));
    }
    SECTION("backward: dwte and dwpe added to their start in the CPU's order, the same bits") {
        const Mat dx = rng.normal_mat(N, d);
        attn::fast::embedding_backward(tokens, T, dx, wte, &wpe);
        const gpu::TokenGroups groups = gpu::group_tokens(tokens);
        const gpu::DeviceBuffer gdx = gpu::to_device(dx, "dx");
        gpu::DeviceBuffer gdwte = gpu::to_device(dwte0, "dwte"), gdwpe = gpu::to_device(dwpe0, "dwpe");
        gpu::embedding_backward(groups, gdx.data(), gdwte.data(), gdwpe.data(), B, T, d);
        CHECK(same_bits(gpu::to_host(gdwte, V, d), wte.grad));
        CHECK(same_bits(gpu::to_host(gdwpe, T + 5, d), wpe.grad));  // rows T … T + 4 untouched
        gdwte.upload(dwte0.data(), dwte0.size());
        gpu::embedding_backward(groups, gdx.data(), gdwte.data(), nullptr, B, T, d);  // no learned positions
        CHECK(same_bits(gpu::to_host(gdwte, V, d), wte.grad));
    }
}

TEST_CASE("gpu train: cross-entropy fused with the softmax and its backward, ignored rows, in place", "[gpu-host][gpu-train]") {
    attn::Rng rng(15);
    const int N = 45, V = 37;
    const Mat logits = rng.normal_mat(N, V) * 3.0f;
    std::vector<int> targets(N);
    int counted = 0;
    for (int n = 0; n < N; ++n) {
        targets[n] = n % 7 == 3 ? -1 : static_cast<int>(rng.below(V));
        counted += targets[n] >= 0;
    }
    const attn::fast::CrossEntropy ce = attn::fast::cross_entropy_forward(logits, targets);
    const Mat dlogits_cpu = attn::fast::cross_entropy_backward(ce, targets);
    const gpu::DeviceBuffer glogits = gpu::to_device(logits, "logits");
    const gpu::DeviceInts gtargets = to_device_ints(targets, "targets");
    gpu::DeviceBuffer glosses = poisoned(N, "losses"), gd = poisoned(static_cast<std::size_t>(N) * V, "dlogits");

    const double loss = gpu::cross_entropy(glogits.data(), gtargets.data(), glosses.data(), gd.data(), N, V, counted);
    CHECK(std::fabs(loss - ce.loss) <= 1e-6 * ce.loss);  // float log-sum-exp against the CPU's double log of float p
    const Mat losses = gpu::to_host(glosses, N, 1), dlogits = gpu::to_host(gd, N, V);
    Mat losses_ref = Mat::from_shape({static_cast<std::size_t>(N), 1});
    for (int n = 0; n < N; ++n) {
        double s = 0, m = -INFINITY;
        for (int j = 0; j < V; ++j) m = std::max(m, static_cast<double>(logits(n, j)));
        for (int j = 0; j < V; ++j) s += std::exp(logits(n, j) - m);
        losses_ref(n, 0) = targets[n] < 0 ? 0.0f : static_cast<float>(std::log(s) + m - logits(n, targets[n]));
    }
    require_close("per-row losses (ignored rows exactly 0)", losses, losses_ref, 1e-5, 1e-6);
    // (p − onehot)/counted: p to a few ulps (expf against the CPU's exp polynomial), over counted ≈ 40
    require_close("dlogits (ignored rows exactly 0)", dlogits, dlogits_cpu, 1e-8, 1e-5);
    for (int n = 3; n < N; n += 7) CHECK(losses(n, 0) == 0.0f);

    // again: the same bits; without dlogits (evaluation): the same loss; in place (dlogits = logits): the same rows
    gd.poison(), glosses.poison();
    CHECK(gpu::cross_entropy(glogits.data(), gtargets.data(), glosses.data(), gd.data(), N, V, counted) == loss);
    CHECK(same_bits(gpu::to_host(gd, N, V), dlogits));
    CHECK(same_bits(gpu::to_host(glosses, N, 1), losses));
    CHECK(gpu::cross_entropy(glogits.data(), gtargets.data(), nullptr, nullptr, N, V, counted) == loss);
    gpu::DeviceBuffer inplace = gpu::to_device(logits, "logits, overwritten by dlogits");
    CHECK(gpu::cross_entropy(inplace.data(), gtargets.data(), nullptr, inplace.data(), N, V, counted) == loss);
    CHECK(same_bits(gpu::to_host(inplace, N, V), dlogits));
}

TEST_CASE("gpu train: cross-entropy over a vocabulary wider than its block (threads stride the row)", "[gpu-host][gpu-train]") {
    attn::Rng rng(18);
    const int N = 3, V = 300;  // 256 threads, the last 44 columns a second stride
    const Mat logits = rng.normal_mat(N, V) * 3.0f;
    const std::vector<int> targets{299, 0, 257};
    const attn::fast::CrossEntropy ce = attn::fast::cross_entropy_forward(logits, targets);
    const gpu::DeviceBuffer glogits = gpu::to_device(logits, "logits");
    const gpu::DeviceInts gtargets = to_device_ints(targets, "targets");
    gpu::DeviceBuffer gd = poisoned(static_cast<std::size_t>(N) * V, "dlogits");
    const double loss = gpu::cross_entropy(glogits.data(), gtargets.data(), nullptr, gd.data(), N, V, N);
    CHECK(std::fabs(loss - ce.loss) <= 1e-6 * ce.loss);
    require_close("dlogits", gpu::to_host(gd, N, V), attn::fast::cross_entropy_backward(ce, targets), 1e-8, 1e-5);
}

TEST_CASE("gpu train: launch shapes of the training kernels", "[gpu-host][gpu-train]") {
    using namespace attn::gpu;
    CHECK(column_sum_blocks(1) == 1);
    CHECK(column_sum_blocks(32) == 1);
    CHECK(column_sum_blocks(33) == 2);
    CHECK(column_sum_chunks(256) == 1);  // one pass, straight into the output
    CHECK(column_sum_chunks(257) == 2);
    CHECK(column_sum_chunks(8192) == 32);  // the chapter's step: 64 · 128 rows
    CHECK(kColumnSumThreads == kColumnSumWidth * kColumnSumGroups);
    CHECK(sum_squares_blocks(0) == 1);
    CHECK(sum_squares_blocks(257) == 2);
    CHECK(sum_squares_blocks(std::size_t{1} << 30) == kMaxSumSquaresBlocks);
    CHECK(cross_entropy_threads(1) == 32);
    CHECK(cross_entropy_threads(37) == 64);
    CHECK(cross_entropy_threads(256) == 256);
    CHECK(cross_entropy_threads(50257) == 256);
}

TEST_CASE("gpu train: RoPE on merged rows, forward and back, the same bits as the CPU's rotate_pairs", "[gpu-host][gpu-train]") {
    attn::Rng rng(16);
    const int B = 3, T = 15, n_heads = 2, d_k = 10;  // width 20
    const Mat angles = attn::rope_angles(static_cast<std::size_t>(T), static_cast<std::size_t>(d_k));  // as the attention's
    const Mat x = rng.normal_mat(B * T, n_heads * d_k);
    const gpu::DeviceBuffer gangles = gpu::to_device(angles, "angles");
    gpu::DeviceBuffer gx = gpu::to_device(x, "x");
    Mat ref = x;
    for (const float sign : {1.0f, -1.0f}) {
        INFO("sign " << sign);
        attn::rotate_pairs(ref, angles, n_heads, sign);
        gpu::rope_rotate(gx.data(), gangles.data(), B, T, n_heads, d_k, sign);
        CHECK(same_bits(gpu::to_host(gx, B * T, n_heads * d_k), ref));
    }
    require_close("Rᵀ R x = x", gpu::to_host(gx, B * T, n_heads * d_k), x, 1e-6, 1e-6);
}

TEST_CASE("gpu train: AdamW's update equals attn::AdamW::step's over 3 steps, bit for bit", "[gpu-host][gpu-train]") {
    // Bits, not a tolerance: the kernel spells each operation with its IEEE round-to-nearest form (no fused
    // multiply-add, correctly rounded division and square root), the CPU's loop in the CPU's order.
    attn::Rng rng(17);
    attn::Parameters p;
    p.normal("W", 45, 20, 0.5f, rng);     // decayed
    p.normal("b", 1, 37, 0.5f, rng).decay = false;
    const attn::AdamWConfig config{.lr = 3e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f, .warmup_steps = 2};
    attn::AdamW opt(p, config);
    std::vector<gpu::DeviceBuffer> w, m, v, g;
    for (attn::Param& q : p.all()) {
        w.push_back(gpu::to_device(q.value, q.name));
        m.push_back(gpu::DeviceBuffer(q.value.size(), "m")), m.back().zero();
        v.push_back(gpu::DeviceBuffer(q.value.size(), "v")), v.back().zero();
        g.push_back(gpu::DeviceBuffer(q.value.size(), "g"));
    }
    for (int step = 1; step <= 3; ++step) {
        std::size_t k = 0;
        for (attn::Param& q : p.all()) {
            q.grad = rng.normal_mat(q.value.shape(0), q.value.shape(1)) * 0.1f;
            if (step == 2) q.grad(0, 0) = 0.0f;  // a zero gradient: only the moments and the decay move w
            g[k++].upload(q.grad.data(), q.grad.size());
        }
        opt.step();
        const float lr = opt.lr_at(step);
        const float bc1 = 1.0f - std::pow(config.beta1, static_cast<float>(step));
        const float bc2 = 1.0f - std::pow(config.beta2, static_cast<float>(step));
        k = 0;
        for (attn::Param& q : p.all()) {
            gpu::adamw_update(w[k].data(), g[k].data(), m[k].data(), v[k].data(), q.value.size(), lr, config.beta1, config.beta2,
                              config.eps, q.decay ? config.weight_decay : 0.0f, bc1, bc2);
            INFO(q.name << " after step " << step);
            CHECK(same_bits(gpu::to_host(w[k], q.value.shape(0), q.value.shape(1)), q.value));
            CHECK(same_bits(gpu::to_host(m[k], q.value.shape(0), q.value.shape(1)), opt.first_moments()[k]));
            CHECK(same_bits(gpu::to_host(v[k], q.value.shape(0), q.value.shape(1)), opt.second_moments()[k]));
            ++k;
        }
    }
}

TEST_CASE("gpu train: bad sizes throw attn::Error naming them", "[gpu-host][gpu-train]") {
    gpu::DeviceBuffer buf(64, "buf");
    buf.zero();
    float* f = buf.data();
    auto throws_with = [](const std::function<void()>& call, const std::string& needle) {
        try {
            call();
            FAIL("nothing thrown; expected a message with \"" << needle << "\"");
        } catch (const attn::Error& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(needle) != std::string::npos);
        }
    };
    throws_with([&] { gpu::layernorm_forward(f, f, f, f, f, f, 0, 20); }, "gpu::layernorm_forward: x (0, 20)");
    throws_with([&] { gpu::layernorm_backward(f, f, f, f, f, f, f, f, 4, -1); }, "gpu::layernorm_backward: dy (4, -1)");
    throws_with([&] { gpu::bias_backward(f, f, 0, 3); }, "gpu::bias_backward: dy (0, 3)");
    throws_with([&] { gpu::embedding_forward(nullptr, f, f, f, f, 2, 0, 4, 5); }, "B, T, d, V = 2, 0, 4, 5");
    throws_with([&] { gpu::group_tokens({1, 2, -3}); }, "token -3 at 2 is negative");
    throws_with([&] { gpu::group_tokens({}); }, "gpu::group_tokens: no tokens");
    throws_with([&] { gpu::embedding_backward(gpu::group_tokens({1, 2, 3}), f, f, f, 2, 2, 4); },
                "the token groups hold 3 positions for B·T = 4");
    throws_with([&] { gpu::cross_entropy(f, nullptr, f, f, 4, 5, 0); }, "counted = 0 scored rows of N = 4");
    throws_with([&] { gpu::cross_entropy(f, nullptr, f, f, 4, 0, 1); }, "logits (4, 0)");
    throws_with([&] { gpu::rope_rotate(f, f, 1, 2, 2, 5, 1.0f); }, "(1·2, 2·5): sizes must be positive and d_k even");
    throws_with([&] { gpu::rope_rotate(f, f, 1, 2, 2, 4, 0.5f); }, "sign = 0.5");
    throws_with([&] { gpu::adamw_update(f, f, f, f, 8, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 0.0f, 0.001f); }, "bc1 = 0");
}

TEST_CASE("gpu train: DeviceInts is on the ledger, moves, and checks its sizes", "[gpu-host][gpu-train]") {
    gpu::MemoryLedger& book = gpu::ledger();
    const std::size_t held = book.current();
    {
        gpu::DeviceInts a(10, "ten ints");
        CHECK(book.current() == held + 10 * sizeof(int));
        const std::vector<int> in{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        a.upload(in.data(), in.size());
        gpu::DeviceInts b = std::move(a);
        CHECK(a.data() == nullptr);
        CHECK(b.size() == 10);
        std::vector<int> out(10, -7);
        b.download(out.data(), out.size());
        CHECK(out == in);
        CHECK(book.current() == held + 10 * sizeof(int));
        CHECK_THROWS_WITH(b.upload(in.data(), 11), Catch::Contains("11 ints into a buffer of 10"));
    }
    CHECK(book.current() == held);
}
