// How fast the language models of Sections 9.1-9.8 train, measured, not guessed.
//
//   bench_lm_train throughput [--full] [--vocab V] [--threads N] [--steps S]
//       tokens/s of the ladder's full one-block model (12_language_model bench's model) at any vocabulary:
//       the chapter's BPE vocabulary of 1024 makes the readout sixteenfold wider than the 65 distinct bytes
//       of tiny Shakespeare, the chapter's text. tools/lm_throughput.sh --vocab runs it beside PyTorch.
//   bench_lm_train project [--threads N] [--steps S]
//       the ladder of `12_language_model --full`: each rung's step time, measured over S steps, times the
//       rung's steps; the sum is the projected wall time of the ladder's training (evaluation not included).
//   bench_lm_train phases [--full] [--vocab V] [--steps S]
//       one training step of the full model cut into its phases — forward (with the loss), backward, and the
//       update (gradient clipping and AdamW) — each timed on its own (the model waits for the device before the
//       clock is read), and, on the GPU, the kernel launches and cuBLAS products a step asks for.
//   --device gpu: the same on the GPU (common/gpu/gpu_model.hpp); exit 77 without one. With it, --tf32: the
//       GPU's products on TF32 tensor cores (core/op.hpp), and --graph: each step's forward and backward
//       recorded once as CUDA Graphs and replayed (gpu/placement.hpp: Launches), both opt-in.
//   bench_lm_train precision --device gpu [--full] [--vocab V] [--steps S]
//       the full model trained S steps (default 50) from one seed on the same batches four ways — the CPU, the
//       GPU in fp32, the same with CUDA Graphs, the GPU with TF32 products — and each GPU run's largest relative
//       loss gap to the CPU and its tokens/s: TF32's tolerance and speed, and whether the graphs change a bit.
//   bench_lm_train memory [--threads N]
//       peak resident memory of training the full model at the chapter's size for 50 and for 200 steps:
//       a step allocates what it frees, so the two peaks should agree.
//
// Random tokens: the data do not change the cost. Times vary run to run and with the machine's load
// (printed); this program is not a test.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>

#include "chapters/12_language_model/ladder.hpp"
#include "chapters/12_language_model/sizes.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "fast/matmul.hpp"
#include "fast/model.hpp"
#include "gpu/placement.hpp"
#include "report/cli.hpp"
#include "report/table.hpp"
#include "report/training.hpp"

using namespace attn;
using namespace attn::sec12;  // the language-model experiments (chapters/12_language_model/)

namespace {

// Trains `config` on random tokens for `steps` steps after one untimed step (first touch of every buffer).
TrainResult train_random(const ModelConfig& config, const LmSetup& s, int steps) {
    const std::unique_ptr<LanguageModel> model = make_model(config, s.seed, s.device, s.engine, s.gpu);
    const std::size_t V = config.vocab;
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(s.batch * s.T), targets.resize(s.batch * s.T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
    };
    TrainConfig tc;
    tc.batch = s.batch, tc.seed = s.seed, tc.progress = false, tc.steps = 1;
    train_loop(*model, sample, s.batch, s.T, tc);
    tc.steps = steps;
    return train_loop(*model, sample, s.batch, s.T, tc);
}

// One step's phases, each timed alone over `steps` steps (after one untimed step), and the device work a step asks.
void print_phases(const ModelConfig& config, const LmSetup& s, int steps) {
    const std::unique_ptr<LanguageModel> model = make_model(config, s.seed, s.device, s.engine, s.gpu);
    Rng rng(s.seed, 5);
    const std::size_t N = s.batch * s.T;
    std::vector<int> tokens(N), targets(N);
    AdamW opt(model->params(), TrainConfig{}.opt);
    const double clip = TrainConfig{}.clip;
    double seconds[3] = {0, 0, 0};
    GpuWork before{};
    for (int step = 0; step <= steps; ++step) {  // step 0: untimed (first touch of every buffer)
        if (step == 1) before = gpu_work();
        for (auto& t : tokens) t = static_cast<int>(rng.below(config.vocab));
        for (auto& t : targets) t = static_cast<int>(rng.below(config.vocab));
        const auto t0 = std::chrono::steady_clock::now();
        model->zero_grad();
        model->forward(tokens, targets, s.batch, s.T);  // returns the loss: the device has finished
        const auto t1 = std::chrono::steady_clock::now();
        model->backward();
        model->wait();
        const auto t2 = std::chrono::steady_clock::now();
        model->update(opt, clip);
        model->wait();
        const auto t3 = std::chrono::steady_clock::now();
        if (step == 0) continue;
        seconds[0] += std::chrono::duration<double>(t1 - t0).count();
        seconds[1] += std::chrono::duration<double>(t2 - t1).count();
        seconds[2] += std::chrono::duration<double>(t3 - t2).count();
    }
    const GpuWork after = gpu_work();
    const double total = seconds[0] + seconds[1] + seconds[2];
    const Table t(std::cout, {{"phase", 34}, {"ms/step", 9, 3}, {"share", 7, 1}}, "  ");
    t.header();
    const char* names[3] = {"forward (embeddings to the loss)", "backward", "update (clip + AdamW)"};
    for (int i = 0; i < 3; ++i) t.row({names[i], 1e3 * seconds[i] / steps, 100 * seconds[i] / total});
    t.row({"the step", 1e3 * total / steps, 100.0});
    std::cout << "tokens/s " << static_cast<long long>(static_cast<double>(N) * steps / total) << " (" << steps << " timed steps)\n";
    if (s.device == Device::gpu) {
        auto per_step = [&](long long a, long long b) { return fmt(static_cast<double>(a - b) / steps, 1); };
        std::cout << "per step: " << per_step(after.kernels, before.kernels) << " kernel launches, "
                  << per_step(after.blas_calls, before.blas_calls) << " cuBLAS products, " << per_step(after.fills, before.fills)
                  << " fills; " << per_step(after.copies_to_device, before.copies_to_device) << " copies to the device and "
                  << per_step(after.copies_to_host, before.copies_to_host) << " to the host (each a wait); "
                  << per_step(after.allocations, before.allocations) << " allocations; " << per_step(after.graphs, before.graphs)
                  << " CUDA Graph launches\n";
    }
}

// The largest |loss − loss of the reference run| / loss of the reference run over the steps.
double largest_relative_gap(const std::vector<double>& losses, const std::vector<double>& reference) {
    double gap = 0;
    for (std::size_t i = 0; i < losses.size() && i < reference.size(); ++i)
        gap = std::max(gap, std::fabs(losses[i] - reference[i]) / std::fabs(reference[i]));
    return gap;
}

// The CPU, the GPU in fp32 (eager, then as CUDA Graphs) and the GPU with TF32 products, trained alike; each GPU run
// against the CPU's losses.
void print_precision(const ModelConfig& config, LmSetup s, int steps, int threads) {
    s.device = Device::cpu;
    const TrainResult cpu = train_random(config, s, steps);
    const Table t(std::cout, {{"run", 30}, {"tokens/s", 11}, {"last loss", 10, 5}, {"largest |loss - CPU's| / CPU's", 31}}, "  ");
    t.header();
    t.row({"CPU, fp32 (" + std::to_string(threads) + " thread(s))", static_cast<long long>(cpu.tokens_per_s), cpu.losses.back(), "-"});
    s.device = Device::gpu;
    std::vector<double> eager;
    bool graphs_same = false;
    for (const GpuSettings g : {GpuSettings{}, GpuSettings{.launches = Launches::graph}, GpuSettings{.matmul = Matmul::tf32}}) {
        s.gpu = g;
        const TrainResult gpu = train_random(config, s, steps);
        const bool graph = g.launches == Launches::graph, tf32 = g.matmul == Matmul::tf32;
        t.row({std::string("GPU, ") + (tf32 ? "TF32 products" : graph ? "fp32, CUDA Graphs" : "fp32"), static_cast<long long>(gpu.tokens_per_s),
               gpu.losses.back(), fmt_sci(largest_relative_gap(gpu.losses, cpu.losses), 2)});
        if (!graph && !tf32) eager = gpu.losses;
        if (graph) graphs_same = gpu.losses == eager;  // bit for bit
    }
    std::cout << "(the tests hold the GPU's fp32 losses to the CPU's within 1e-4 relative; TF32's gap is its own tolerance)\n"
              << "CUDA Graphs' losses are eager launching's, bit for bit: " << (graphs_same ? "yes" : "NO") << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::string command = "throughput";
    bool full = false;
    int vocab = 65, threads = 1, steps = 0;
    Cli cli("bench_lm_train", "Training speed of the language models: tokens/s, the --full ladder's projected time, peak memory");
    cli.add_choice("command", command, {"throughput", "phases", "project", "memory", "precision"}, "what to measure (default throughput)");
    cli.add_switch("--full", full, "throughput and phases at the chapter's size (width 128, context 128, batch 64; otherwise 12_language_model --medium's: 64, 64, 32)");
    cli.add("--vocab", vocab, "vocabulary (65: tiny Shakespeare's bytes; the chapter's BPE: 1024)", 2, 65536);
    cli.add("--threads", threads, "BLAS threads", 1, 256);
    cli.add("--steps", steps, "timed steps (0: 20 for throughput and phases, 10 a rung for project)", 0, 100'000);
    std::string device = "cpu";
    cli.add("--device", device, "where the models train (gpu: the GPU model of common/gpu/gpu_model.hpp; exit 77 without one)", {"cpu", "gpu"});
    bool tf32 = false;
    cli.add_switch("--tf32", tf32, "with --device gpu: the products on TF32 tensor cores (10-bit mantissas; off by default)");
    bool graph = false;
    cli.add_switch("--graph", graph, "with --device gpu: each step's forward and backward recorded once as CUDA Graphs and replayed");
    Engine engine = Engine::fast;
    add_engine_flag(cli, engine);
    cli.check([&] {
        if (tf32 && device != "gpu") throw UsageError("--tf32: TF32 products are the GPU's; add --device gpu");
        if (graph && device != "gpu") throw UsageError("--graph: CUDA Graphs are the GPU's; add --device gpu");
        if (command == "precision" && device != "gpu") throw UsageError("precision compares the GPU with the CPU: add --device gpu");
        if (command == "precision" && (tf32 || graph))
            throw UsageError(std::string(tf32 ? "--tf32" : "--graph") + ": precision runs fp32, TF32 and CUDA Graphs itself");
    });
    return run_program(cli, argc, argv, [&] {
        std::string load;  // 1, 5 and 15 min load averages, then running/total tasks and the last pid
        std::getline(std::ifstream("/proc/loadavg"), load);
        std::cout << "machine load: " << load << "\n";
        const Device where = device_for(device);
        const std::string on = where == Device::gpu ? gpu_description() + (tf32 ? ", TF32 products" : ", fp32") +
                                                          (graph ? ", CUDA Graphs" : ", eager launches")
                                                    : std::to_string(threads) + " thread(s)";
        const GpuSettings gpu_settings{.matmul = tf32 ? Matmul::tf32 : Matmul::fp32, .launches = graph ? Launches::graph : Launches::eager};
        fast::fix_blas_threads(threads);
        if (command == "throughput") {
            LmSetup s = lm_setup("ladder", full ? LmSize::full : LmSize::medium);
            s.device = where, s.engine = engine, s.gpu = gpu_settings;
            const double rate = ladder_block_tokens_per_s(static_cast<std::size_t>(vocab), s, steps > 0 ? steps : 20, threads);
            std::cout << "width " << s.d_model << ", context " << s.T << ", batch " << s.batch << ", vocabulary " << vocab
                      << ", " << on << ": tokens/s " << static_cast<long long>(rate) << "\n";
        } else if (command == "phases") {
            LmSetup s = lm_setup("ladder", full ? LmSize::full : LmSize::medium);
            s.device = where, s.engine = engine, s.gpu = gpu_settings;
            std::cout << "one training step of the ladder's full block, width " << s.d_model << ", context " << s.T << ", batch " << s.batch
                      << ", vocabulary " << vocab << ", " << on << ":\n";
            print_phases(ladder_rungs(static_cast<std::size_t>(vocab), s).back().config, s, steps > 0 ? steps : 20);
        } else if (command == "precision") {
            LmSetup s = lm_setup("ladder", full ? LmSize::full : LmSize::medium);
            s.engine = engine;
            const int n = steps > 0 ? steps : 50;
            std::cout << "the ladder's full block, width " << s.d_model << ", context " << s.T << ", batch " << s.batch << ", vocabulary " << vocab
                      << ", trained " << n << " steps from seed " << s.seed << " on the same random batches, on the CPU and on " << gpu_description()
                      << ":\n";
            print_precision(ladder_rungs(static_cast<std::size_t>(vocab), s).back().config, s, n, threads);
        } else if (command == "project") {
            LmSetup s = lm_setup("ladder", LmSize::full);
            s.device = where, s.engine = engine, s.gpu = gpu_settings;
            const int timed = steps > 0 ? steps : 10;
            std::cout << "12_language_model --full ladder (width " << s.d_model << ", context " << s.T << ", batch " << s.batch
                      << ", vocabulary " << vocab << ", " << on << "), from " << timed << " timed steps a rung:\n";
            const Table t(std::cout, {{"rung", 44}, {"ms/step", 9, 1}, {"steps", 6}, {"projected min", 14, 1}}, "  ");
            t.header();
            double total = 0;
            for (const LadderRung& rung : ladder_rungs(static_cast<std::size_t>(vocab), s)) {
                const double per_step = train_random(rung.config, s, timed).seconds / timed;
                total += per_step * s.steps;
                t.row({rung.name, 1e3 * per_step, s.steps, per_step * s.steps / 60});
            }
            std::cout << "projected training time of the ladder" << (where == Device::gpu ? " (12_language_model ladder --full --device gpu)" : "")
                      << ": " << fmt(total / 60, 1) << " min (evaluations not included)\n";
        } else {
            const LmSetup s = lm_setup("ladder", LmSize::full);
            const ModelConfig config = ladder_rungs(static_cast<std::size_t>(vocab), s).back().config;
            for (const int n : {50, 200}) {
                const PeakMemory m = measure_peak_memory([&] { train_random(config, s, n); });
                std::cout << "full model, chapter's size, " << n << " steps: peak resident " << fmt(m.peak / 1048576.0, 1)
                          << " MiB (" << fmt(m.rise() / 1048576.0, 1) << " MiB above the start" << (m.reset ? "" : ", upper bound")
                          << ")\n";
            }
        }
        fast::fix_blas_threads(0);
    });
}
