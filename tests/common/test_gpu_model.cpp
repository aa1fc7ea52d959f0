// The GPU model (common/gpu/gpu_model.hpp) against the CPU model it mirrors, on the kernels' CPU emulation
// (tests/common/cuda_on_cpu.hpp, with the module's .cu files compiled as C++): every configuration the chapter trains gives the CPU's loss and the CPU's
// gradients, tensor by tensor; 20 steps of the training loop give the CPU's losses to 1e-4 relative; the same
// seed gives the same bits twice; a run saved on the GPU and resumed ends where an unbroken one does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include "attention_train.hpp"
#include "cuda_on_cpu_runtime.hpp"
#include "fast/model.hpp"
#include "gpu_model.hpp"
#include "launch.hpp"
#include "ops.hpp"
#include "train/train.hpp"
#include "train_layers.hpp"

using namespace attn;
using attn::gpu::AttentionPath;
using attn::gpu::GpuModel;
using attn::gpu::Launches;

namespace {

constexpr std::size_t V = 13, T = 9, B = 2;

struct Case {
    std::string name;
    ModelConfig config;
};

// Every kind of model the chapter trains, small: the ladder's rungs (12_language_model/ladder.cpp), the
// norm placements, the four position kinds, GPT-2's shape (biases, tied readout), the √d_k ablation, d_k ≠
// d / h, an encoder (no mask) and a two-block stack.
std::vector<Case> cases() {
    ModelConfig c{.vocab = V, .max_T = T, .d_model = 8, .n_heads = 1, .mixer = Mixer::none, .positions = Positions::none};
    std::vector<Case> all;
    all.push_back({"no context", c});
    c.mixer = Mixer::uniform, c.residual = false;
    all.push_back({"uniform causal average", c});
    c.positions = Positions::learned;
    all.push_back({"+ learned positions", c});
    c.residual = true;
    all.push_back({"+ residual", c});
    c.mixer = Mixer::learned, c.residual = false, c.output_projection = false;
    all.push_back({"one head, replacing", c});
    c.residual = true;
    all.push_back({"one head, added", c});
    c.n_heads = 2, c.output_projection = true, c.output_bias = true;
    all.push_back({"2 heads", c});
    c.d_ff = 16;
    all.push_back({"+ FFN", c});
    c.norm = Norm::pre;
    all.push_back({"+ LayerNorm (full block)", c});
    ModelConfig post = c;
    post.norm = Norm::post;
    all.push_back({"post-norm", post});
    for (Positions p : {Positions::sinusoidal, Positions::rope, Positions::alibi}) {
        ModelConfig q = c;
        q.positions = p;
        all.push_back({std::string("positions ") + positions_name(p), q});
    }
    all.push_back({"GPT-2's shape, 2 blocks", gpt2_config({.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .n_layers = 2})});
    ModelConfig unscaled = c;
    unscaled.scale = false, unscaled.n_heads = 1, unscaled.d_k = 12;
    all.push_back({"no scale, d_k 12 of d_model 8", unscaled});
    ModelConfig encoder = c;
    encoder.causal = false;
    all.push_back({"no mask (an encoder)", encoder});
    return all;
}

void random_batch(std::uint64_t seed, std::vector<int>& tokens, std::vector<int>& targets) {
    Rng rng(seed);
    tokens.resize(B * T), targets.resize(B * T);
    for (auto& t : tokens) t = static_cast<int>(rng.below(V));
    for (std::size_t i = 0; i < targets.size(); ++i) targets[i] = i % 5 == 3 ? -1 : static_cast<int>(rng.below(V));  // some unscored
}

const BatchSampler random_tokens = [](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
    tokens.resize(B * T), targets.resize(B * T);
    for (auto& t : tokens) t = static_cast<int>(rng.below(V));
    for (auto& t : targets) t = static_cast<int>(rng.below(V));
};

ModelConfig config_named(const std::string& name) {
    for (const Case& k : cases())
        if (k.name == name) return k.config;
    throw std::logic_error("no case named " + name);
}

double max_abs(const Mat& m) {
    double a = 0;
    for (float x : m) a = std::max(a, static_cast<double>(std::fabs(x)));
    return a;
}

}  // namespace

TEST_CASE("gpu model: every configuration's loss and gradients are the CPU model's (emulated kernels)", "[gpu-host][gpu-model]") {
    std::vector<int> tokens, targets;
    random_batch(7, tokens, targets);
    for (const Case& k : cases()) {
        for (AttentionPath path : {AttentionPath::materialised, AttentionPath::automatic}) {
            INFO(k.name << ", attention " << gpu::attention_path_name(path));
            fast::Model cpu(k.config, 3);
            GpuModel dev(k.config, 3, {.attention = path});
            const double loss_cpu = cpu.forward(tokens, targets, B, T);
            const double loss_gpu = dev.forward(tokens, targets, B, T);
            // fp32 through a dozen layers of sums over at most 16 terms: a few ulps of the loss
            CHECK(std::fabs(loss_gpu - loss_cpu) <= 1e-5 * std::fabs(loss_cpu));
            cpu.params().zero_grad(), dev.zero_grad();
            cpu.backward(), dev.backward();
            const std::vector<Mat> g = dev.gradients();
            std::size_t i = 0;
            for (const Param& p : cpu.params().all()) {
                const Mat& mine = g[i++];
                const double scale = max_abs(p.grad);
                double worst = 0;
                std::size_t at = 0;
                for (std::size_t e = 0; e < p.grad.size(); ++e) {
                    const double diff = std::fabs(static_cast<double>(mine.data()[e]) - p.grad.data()[e]);
                    if (diff > worst) worst = diff, at = e;
                }
                INFO(p.name << " " << shape_str(p.grad) << ": element " << at << " GPU " << mine.data()[at] << ", CPU " << p.grad.data()[at]
                            << " (largest |gradient| " << scale << ")");
                // the emulation's products sum in double, OpenBLAS's in float: 1e-4 of the tensor's largest entry
                CHECK(worst <= 1e-4 * scale + 1e-7);
            }
            const ModelConfig& c = k.config;
            const bool flash_takes = c.mixer == Mixer::learned && c.causal && (c.d_k == 0 || c.d_k == c.d_model / c.n_heads);
            if (path == AttentionPath::automatic)
                CHECK(dev.attention_path(B, T) == (flash_takes ? AttentionPath::flash : AttentionPath::materialised));
        }
    }
}

TEST_CASE("gpu model: the automatic path takes flash only where its blocks' shared memory fits the card (48 KB, 99 KB, 227 KB)",
          "[gpu-host][gpu-model]") {
    // The flash kernels ask for, per block: 29,184 B at d_head 16, 41,472 at 32, 66,560 (the backward's) at 64 and 132,096 (the
    // backward's) at 65-128. Whether each fits, written out per card rather than recomputed from launch.hpp.
    struct Card {
        const char* name;
        std::size_t limit;         // the most shared memory a block may opt in to
        std::vector<bool> fits;    // at d_head 16, 32, 64, 100, 128
    };
    const std::vector<Card> cards = {{"a 48 KB card", 49'152, {true, true, false, false, false}},
                                     {"a consumer card (sm_86, sm_89, sm_120): 99 KB", 101'376, {true, true, true, false, false}},
                                     {"an H100 or H200: 227 KB", 232'448, {true, true, true, true, true}}};
    const std::vector<std::size_t> d_heads = {16, 32, 64, 100, 128};
    struct Restore {  // the emulated card is the H200 again after this test, whatever happens
        ~Restore() { cuda_on_cpu::set_shared_bytes_per_block(232'448); }
    } restore;
    std::vector<int> tokens, targets;
    random_batch(7, tokens, targets);
    for (const Card& card : cards) {
        cuda_on_cpu::set_shared_bytes_per_block(card.limit);
        for (std::size_t i = 0; i < d_heads.size(); ++i) {
            INFO(card.name << ", d_head " << d_heads[i] << " (the flash kernels ask for " << gpu::flash_shared_bytes(static_cast<long long>(d_heads[i]))
                           << " B a block)");
            const ModelConfig c{.vocab = V, .max_T = T, .d_model = d_heads[i], .n_heads = 1};
            fast::Model cpu(c, 3);
            GpuModel dev(c, 3);
            CHECK(dev.attention_path(B, T) == (card.fits[i] ? AttentionPath::flash : AttentionPath::materialised));
            // Either path trains: the emulated allow_shared_bytes refuses a launch past the card's limit, as CUDA does.
            const double loss_cpu = cpu.forward(tokens, targets, B, T);
            const double loss_gpu = dev.forward(tokens, targets, B, T);
            CHECK(std::fabs(loss_gpu - loss_cpu) <= 1e-5 * std::fabs(loss_cpu));
            dev.backward();
            if (!card.fits[i]) {  // asked for where it does not fit: refused before any launch, naming both sizes
                GpuModel forced(c, 3, {.attention = AttentionPath::flash});
                CHECK_THROWS_WITH(forced.forward(tokens, targets, B, T),
                                  Catch::Contains("AttentionPath::flash") && Catch::Contains("this device allows a block " + std::to_string(card.limit)) &&
                                      Catch::Contains(std::to_string(gpu::flash_shared_bytes(static_cast<long long>(d_heads[i])))));
            }
        }
    }
}

TEST_CASE("gpu model: the emulated card refuses a kernel more shared memory than it has, as CUDA does", "[gpu-host][gpu-model]") {
    struct Restore {
        ~Restore() { cuda_on_cpu::set_shared_bytes_per_block(232'448); }
    } restore;
    cuda_on_cpu::set_shared_bytes_per_block(101'376);
    // Without the model's check (straight to the kernels), the launch itself is refused: the automatic path's
    // choice is what keeps a consumer card training.
    const gpu::AttentionShape s{.B = 1, .n_heads = 1, .T = 4, .d_k = 128, .d_v = 128, .weighting = gpu::Weighting::learned,
                                .causal = true, .scale = 1.0f, .alibi_slopes = nullptr};
    std::vector<float> q(4 * 128, 0.1f), out(4 * 128), lse(4);
    CHECK_THROWS_WITH(gpu::attention_forward_flash(q.data(), q.data(), q.data(), out.data(), lse.data(), s),
                      Catch::Contains("flash_forward_kernel use 115200 bytes of shared memory failed"));
}

TEST_CASE("gpu model: every step asks the device for the same work, and clipping adds a sum per tensor and one factor",
          "[gpu-host][gpu-model]") {
    const ModelConfig c = config_named("+ LayerNorm (full block)");
    GpuModel dev(c, 3);
    AdamW opt(dev.params(), AdamWConfig{});
    const long long tensors = static_cast<long long>(dev.params().all().size());
    std::vector<int> tokens, targets;
    // one step's work, counted where the host code asks for it (launch.hpp, kernel_launch.cuh)
    auto step = [&](double clip) {
        const gpu::DeviceWork before = gpu::device_work();
        random_batch(static_cast<std::uint64_t>(opt.steps_taken()) + 1, tokens, targets);
        dev.zero_grad();
        dev.forward(tokens, targets, B, T);
        dev.backward();
        dev.update(opt, clip);
        const gpu::DeviceWork after = gpu::device_work();
        return gpu::DeviceWork{.kernels = after.kernels - before.kernels, .blas_calls = after.blas_calls - before.blas_calls,
                               .allocations = after.allocations - before.allocations, .fills = after.fills - before.fills,
                               .copies_to_device = after.copies_to_device - before.copies_to_device,
                               .copies_to_host = after.copies_to_host - before.copies_to_host};
    };
    step(0.0);  // the first step makes the scratch the others reuse
    const gpu::DeviceWork w = step(0.0);
    INFO("a step without clipping: " << w.kernels << " kernel launches, " << w.blas_calls << " products, " << w.fills << " fills, "
                                      << w.copies_to_device << " copies to the device, " << w.copies_to_host << " to the host, "
                                      << w.allocations << " allocations");
    CHECK(w.kernels > 0);
    CHECK(w.blas_calls > 0);
    CHECK(w.allocations == 0);               // every buffer kept from the first step
    CHECK(w.fills == 0);                     // zero_grad: one launch for every gradient (TensorGroup), no memset
    CHECK(w.copies_to_device == 5);          // tokens, targets, and the embedding backward's three token-group arrays
    CHECK(w.copies_to_host == 1);            // the loss
    const gpu::DeviceWork again = step(0.0);  // nothing depends on the data or the step
    CHECK(std::tie(again.kernels, again.blas_calls, again.allocations, again.fills, again.copies_to_device, again.copies_to_host) ==
          std::tie(w.kernels, w.blas_calls, w.allocations, w.fills, w.copies_to_device, w.copies_to_host));
    step(1.0);  // the first clipped step makes the clip's scratch
    const gpu::DeviceWork clipped = step(1.0);
    CHECK(clipped.kernels == w.kernels + 2);  // every tensor's sums of squares in one launch, and the factor
    CHECK(tensors > 2);
    CHECK(clipped.blas_calls == w.blas_calls);
    CHECK(clipped.allocations == 0);
    CHECK(clipped.copies_to_host == 1);  // the norm stays on the device
}

namespace {
TrainConfig steps_config(int steps) {
    TrainConfig tc;
    tc.steps = steps, tc.batch = B, tc.seed = 11, tc.progress = false, tc.clip = 1.0;
    tc.opt.warmup_steps = 5;
    return tc;
}
}  // namespace

TEST_CASE("gpu model: 20 training steps give the CPU's losses to 1e-4 relative (emulated kernels)", "[gpu-host][gpu-model]") {
    // The ladder's full block (gpu_tests trains six configurations this way on a device)
    for (const Case& k : {Case{"+ LayerNorm (full block)", config_named("+ LayerNorm (full block)")}}) {
        INFO(k.name);
        fast::Model cpu(k.config, 5);
        GpuModel dev(k.config, 5);
        const TrainResult a = train_loop(cpu, random_tokens, B, T, steps_config(20));
        const TrainResult b = train_loop(dev, random_tokens, B, T, steps_config(20));
        REQUIRE(a.losses.size() == 20);
        REQUIRE(b.losses.size() == 20);
        for (std::size_t i = 0; i < a.losses.size(); ++i) {
            INFO("step " << i + 1 << ": GPU " << b.losses[i] << ", CPU " << a.losses[i]);
            CHECK(std::fabs(b.losses[i] - a.losses[i]) <= 1e-4 * std::fabs(a.losses[i]));
        }
        // and the trained weights came back to params() (train_loop's closing sync_to_host)
        double worst = 0;
        for (std::size_t i = 0; i < cpu.params().all().size(); ++i) {
            const Mat& x = cpu.params().all()[i].value;
            const Mat& y = dev.params().all()[i].value;
            for (std::size_t e = 0; e < x.size(); ++e) worst = std::max(worst, static_cast<double>(std::fabs(x.data()[e] - y.data()[e])));
        }
        CHECK(worst < 1e-3);
        CHECK(worst > 0);  // the host copy is the trained one, not the CPU's by coincidence of a missing sync
    }
}

TEST_CASE("gpu model: TF32 products (opt-in) stay within their measured tolerance of the CPU, and fp32 is untouched by them",
          "[gpu-host][gpu-model]") {
    // The emulator reads each operand of a TF32 product rounded to 10 mantissa bits, to nearest, ties to even
    using cuda_on_cpu::to_tf32;
    CHECK(to_tf32(1.0f + 0x1p-10f) == 1.0f + 0x1p-10f);          // kept: the 10th bit is TF32's last
    CHECK(to_tf32(1.0f + 0x1p-11f) == 1.0f);                     // a tie, to the even neighbour
    CHECK(to_tf32(1.0f + 0x1p-10f + 0x1p-11f) == 1.0f + 0x1p-9f);  // a tie, to the even neighbour above
    CHECK(to_tf32(1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f);  // past the tie: up
    // 20 steps of the full block. Over seeds 5 to 9 the largest relative gap of TF32's losses to the CPU's was
    // 4.9e-5 to 9.2e-5 (fp32: 3.1e-8 to 4.2e-8): the tolerance is twice the largest, 2e-4.
    const ModelConfig c = config_named("+ LayerNorm (full block)");
    fast::Model cpu(c, 5);
    GpuModel tf32(c, 5, {.matmul = Matmul::tf32}), fp32(c, 5);
    const TrainResult a = train_loop(cpu, random_tokens, B, T, steps_config(20));
    const TrainResult t = train_loop(tf32, random_tokens, B, T, steps_config(20));
    double gap = 0;
    for (std::size_t i = 0; i < a.losses.size(); ++i) gap = std::max(gap, std::fabs(t.losses[i] - a.losses[i]) / std::fabs(a.losses[i]));
    INFO("TF32's largest relative loss gap to the CPU over 20 steps: " << gap);
    CHECK(gap <= 2e-4);
    CHECK(gap > 1e-6);  // TF32 took effect: fp32's gap is about 4e-8
    // The model that ran TF32 left the products in TF32; an fp32 model sets its own again, step by step.
    const TrainResult f = train_loop(fp32, random_tokens, B, T, steps_config(3));
    GpuModel fresh(c, 5);
    const TrainResult g = train_loop(fresh, random_tokens, B, T, steps_config(3));
    CHECK(std::memcmp(f.losses.data(), g.losses.data(), f.losses.size() * sizeof(double)) == 0);
    for (std::size_t i = 0; i < f.losses.size(); ++i)  // fp32's gap (about 4e-8), far under TF32's (about 5e-5 by step 3)
        CHECK(std::fabs(f.losses[i] - a.losses[i]) <= 1e-6 * std::fabs(a.losses[i]));
}

TEST_CASE("gpu model: recorded as CUDA Graphs, a step gives eager launching's bits with two graph launches", "[gpu-host][gpu-model]") {
    for (const std::string name : {"+ LayerNorm (full block)", "positions RoPE", "post-norm", "uniform causal average"}) {
        INFO(name);
        const ModelConfig c = config_named(name);
        GpuModel eager(c, 4), graph(c, 4, {.launches = Launches::graph});
        AdamW opt_e(eager.params(), AdamWConfig{}), opt_g(graph.params(), AdamWConfig{});
        std::vector<int> tokens, targets;
        gpu::DeviceWork last{};
        // steps at one shape, then an evaluation at another (B = 1) and a batch with another count of scored
        // targets, each of which drops the recordings; then the first shape again
        for (int step = 0; step < 7; ++step) {
            INFO("step " << step);
            random_batch(static_cast<std::uint64_t>(step) + 20, tokens, targets);
            if (step == 3) {  // an evaluation on one sequence: a new shape
                const std::vector<int> t1(tokens.begin(), tokens.begin() + T), y1(targets.begin(), targets.begin() + T);
                const double a = eager.forward(t1, y1, 1, T), b = graph.forward(t1, y1, 1, T);
                CHECK(std::memcmp(&a, &b, sizeof a) == 0);
            }
            if (step == 4) std::fill(targets.begin(), targets.end(), 1);  // every target scored: another count
            eager.zero_grad(), graph.zero_grad();
            const gpu::DeviceWork before = gpu::device_work();
            const double le = eager.forward(tokens, targets, B, T);
            const double lg = graph.forward(tokens, targets, B, T);
            CHECK(std::memcmp(&le, &lg, sizeof le) == 0);
            eager.backward(), graph.backward();
            const std::vector<Mat> ge = eager.gradients(), gg = graph.gradients();
            for (std::size_t i = 0; i < ge.size(); ++i) CHECK(std::memcmp(ge[i].data(), gg[i].data(), ge[i].size() * sizeof(float)) == 0);
            eager.update(opt_e, 1.0), graph.update(opt_g, 1.0);
            last = gpu::device_work();
            last.graphs -= before.graphs;
            const Mat& xe = eager.logits();
            const Mat& xg = graph.logits();
            CHECK(std::memcmp(xe.data(), xg.data(), xe.size() * sizeof(float)) == 0);
        }
        CHECK(last.graphs == 2);  // the last step replayed its forward and its backward
        {  // any allocation since the recordings (another model's buffer; a shared scratch grown) drops them
            const gpu::DeviceBuffer other(1, "another model's buffer");
            random_batch(99, tokens, targets);
            const long long before = gpu::device_work().graphs;
            const double le = eager.forward(tokens, targets, B, T), lg = graph.forward(tokens, targets, B, T);
            CHECK(std::memcmp(&le, &lg, sizeof le) == 0);
            CHECK(gpu::device_work().graphs == before);  // run eagerly, to be recorded anew
        }
        eager.sync_to_host(&opt_e), graph.sync_to_host(&opt_g);
        for (std::size_t i = 0; i < eager.params().all().size(); ++i) {
            const Mat& we = eager.params().all()[i].value;
            const Mat& wg = graph.params().all()[i].value;
            CHECK(std::memcmp(we.data(), wg.data(), we.size() * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("gpu model: a CUDA Graph's capture refuses a copy or a wait inside it, and keeps nothing", "[gpu-host][gpu-model]") {
    gpu::DeviceBuffer buf(4, "a buffer");
    const std::vector<float> host{1, 2, 3, 4};
    gpu::DeviceGraph graph;
    CHECK_THROWS_WITH(graph.capture([&] { buf.upload(host.data(), 4); }),
                      Catch::Contains("copying a DeviceBuffer's floats to the device inside a CUDA Graph's capture"));
    CHECK(graph.empty());
    CHECK_THROWS_WITH(graph.capture([&] { gpu::synchronize(); }), Catch::Contains("waiting for the device inside a CUDA Graph's capture"));
    CHECK_THROWS_WITH(graph.capture([&] { gpu::DeviceBuffer grown(8, "a buffer grown mid-step"); }),
                      Catch::Contains("allocating a buffer grown mid-step inside a CUDA Graph's capture"));
    CHECK_THROWS_WITH(graph.launch(), Catch::Contains("nothing was captured"));
    buf.upload(host.data(), 4);  // after the refused captures, work runs again
    graph.capture([&] { gpu::scale_inplace(buf.data(), 4, 2.0f); });  // recorded, not run
    std::vector<float> back(4);
    buf.download(back.data(), 4);
    CHECK(back == host);
    graph.launch(), graph.launch();  // replayed twice
    buf.download(back.data(), 4);
    CHECK(back == std::vector<float>{4, 8, 12, 16});
}

TEST_CASE("gpu model: the same seed gives the same losses, bit for bit, twice", "[gpu-host][gpu-model]") {
    const ModelConfig c = config_named("+ LayerNorm (full block)");
    GpuModel one(c, 5), two(c, 5);
    const TrainResult a = train_loop(one, random_tokens, B, T, steps_config(3));
    const TrainResult b = train_loop(two, random_tokens, B, T, steps_config(3));
    CHECK(std::memcmp(a.losses.data(), b.losses.data(), a.losses.size() * sizeof(double)) == 0);
}

TEST_CASE("gpu model: a run saved on the GPU and resumed ends where an unbroken one does", "[gpu-host][gpu-model]") {
    const ModelConfig c = config_named("+ LayerNorm (full block)");
    GpuModel whole(c, 5);
    const TrainResult all = train_loop(whole, random_tokens, B, T, steps_config(4));
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("attn-gpu-ckpt-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    GpuModel first(c, 5);
    TrainConfig half = steps_config(2);
    half.save_dir = dir.string();
    train_loop(first, random_tokens, B, T, half);
    GpuModel second(c, 6);  // another seed: everything must come from the checkpoint
    TrainConfig rest = steps_config(4);
    rest.resume_dir = dir.string();
    const TrainResult resumed = train_loop(second, random_tokens, B, T, rest);
    std::filesystem::remove_all(dir);
    REQUIRE(resumed.losses.size() == all.losses.size());
    CHECK(std::memcmp(resumed.losses.data(), all.losses.data(), all.losses.size() * sizeof(double)) == 0);
    for (std::size_t i = 0; i < whole.params().all().size(); ++i) {
        const Mat& x = whole.params().all()[i].value;
        const Mat& y = second.params().all()[i].value;
        INFO(whole.params().all()[i].name);
        CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("gpu model: a second training run starts from fresh AdamW moments, as on the CPU", "[gpu-host][gpu-model]") {
    const ModelConfig c = config_named("+ LayerNorm (full block)");
    fast::Model cpu(c, 5);
    GpuModel dev(c, 5);
    train_loop(cpu, random_tokens, B, T, steps_config(2));  // e.g. a warm-up step before a timed run
    train_loop(dev, random_tokens, B, T, steps_config(2));
    const TrainResult a = train_loop(cpu, random_tokens, B, T, steps_config(3));
    const TrainResult b = train_loop(dev, random_tokens, B, T, steps_config(3));
    for (std::size_t i = 0; i < a.losses.size(); ++i) {
        INFO("step " << i + 1 << " of the second run: GPU " << b.losses[i] << ", CPU " << a.losses[i]);
        CHECK(std::fabs(b.losses[i] - a.losses[i]) <= 1e-4 * std::fabs(a.losses[i]));
    }
}

TEST_CASE("gpu model: logits() are the CPU's, after a forward of another shape in between", "[gpu-host][gpu-model]") {
    const ModelConfig c = config_named("positions RoPE");
    fast::Model cpu(c, 2);
    GpuModel dev(c, 2);
    std::vector<int> tokens, targets;
    random_batch(3, tokens, targets);
    std::vector<int> short_tokens(tokens.begin(), tokens.begin() + 5), short_targets(targets.begin(), targets.begin() + 5);
    short_targets[0] = 1;
    cpu.forward(tokens, targets, B, T);
    dev.forward(short_tokens, short_targets, 1, 5);  // a smaller shape first: the buffers stay, the results must not
    dev.forward(tokens, targets, B, T);
    const Mat& want = cpu.logits();
    const Mat& got = dev.logits();
    REQUIRE(got.shape() == want.shape());
    double worst = 0;
    for (std::size_t e = 0; e < want.size(); ++e) worst = std::max(worst, static_cast<double>(std::fabs(got.data()[e] - want.data()[e])));
    CHECK(worst <= 1e-5 * max_abs(want));
    // and a backward after it is the CPU's
    cpu.params().zero_grad(), dev.zero_grad();
    cpu.backward(), dev.backward();
    const std::vector<Mat> g = dev.gradients();
    for (std::size_t i = 0; i < g.size(); ++i) {
        const Param& p = cpu.params().all()[i];
        double diff = 0;
        for (std::size_t e = 0; e < p.grad.size(); ++e) diff = std::max(diff, static_cast<double>(std::fabs(g[i].data()[e] - p.grad.data()[e])));
        INFO(p.name);
        CHECK(diff <= 1e-4 * max_abs(p.grad) + 1e-7);
    }
}

TEST_CASE("gpu model: bad tokens, targets and shapes are refused before anything runs, naming them", "[gpu-host][gpu-model][errors]") {
    GpuModel dev(config_named("+ LayerNorm (full block)"), 1);
    std::vector<int> tokens, targets;
    random_batch(3, tokens, targets);
    using Catch::Matchers::Contains;
    std::vector<int> bad = targets;
    bad[4] = static_cast<int>(V);
    CHECK_THROWS_WITH(dev.forward(tokens, bad, B, T), Contains("target 13 at 4 is outside the vocabulary of 13"));
    bad = tokens;
    bad[2] = -3;
    CHECK_THROWS_WITH(dev.forward(bad, targets, B, T), Contains("token -3 at 2 is outside the vocabulary"));
    CHECK_THROWS_WITH(dev.forward(tokens, targets, B, T - 1), Contains("targets for B·T = 2·8"));
    CHECK_THROWS_WITH(dev.forward(tokens, std::vector<int>(B * T, -1), B, T), Contains("no target to score"));
    CHECK_THROWS_WITH(dev.backward(), Contains("no forward has run yet"));
}
