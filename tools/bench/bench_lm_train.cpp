// How fast the language models of Sections 9.1-9.8 train, measured, not guessed.
//
//   bench_lm_train throughput [--full] [--vocab V] [--threads N] [--steps S]
//       tokens/s of the ladder's full one-block model (12_language_model bench's model) at any vocabulary:
//       the chapter's BPE vocabulary of 1024 makes the readout sixteenfold wider than the 65 distinct bytes
//       of tiny Shakespeare, the chapter's text. tools/lm_throughput.sh --vocab runs it beside PyTorch.
//   bench_lm_train project [--threads N] [--steps S]
//       the ladder of `12_language_model --full`: each rung's step time, measured over S steps, times the
//       rung's steps; the sum is the projected wall time of the ladder's training (evaluation not included).
//   --device gpu: the same on the GPU (common/gpu/gpu_model.hpp); exit 77 without one.
//   bench_lm_train memory [--threads N]
//       peak resident memory of training the full model at the chapter's size for 50 and for 200 steps:
//       a step allocates what it frees, so the two peaks should agree.
//
// Random tokens: the data do not change the cost. Times vary run to run and with the machine's load
// (printed); this program is not a test.
#include <fstream>
#include <iostream>
#include <string>

#include "attn/cli.hpp"
#include "attn/device.hpp"
#include "attn/error.hpp"
#include "chapters/12_language_model/ladder.hpp"
#include "chapters/12_language_model/sizes.hpp"
#include "attn/matmul.hpp"
#include "attn/memory.hpp"
#include "attn/model.hpp"
#include "attn/table.hpp"

using namespace attn;
using namespace attn::sec12;  // the language-model experiments (chapters/12_language_model/)

namespace {

// Trains `config` on random tokens for `steps` steps after one untimed step (first touch of every buffer).
TrainResult train_random(const ModelConfig& config, const LmSetup& s, int steps) {
    const std::unique_ptr<LanguageModel> model = make_model(config, s.seed, s.device, s.engine);
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

}  // namespace

int main(int argc, char** argv) {
    std::string command = "throughput";
    bool full = false;
    int vocab = 65, threads = 1, steps = 0;
    Cli cli("bench_lm_train", "Training speed of the language models: tokens/s, the --full ladder's projected time, peak memory");
    cli.add_choice("command", command, {"throughput", "project", "memory"}, "what to measure (default throughput)");
    cli.add_switch("--full", full, "throughput at the chapter's size (width 128, context 128, batch 64)");
    cli.add("--vocab", vocab, "vocabulary (65: tiny Shakespeare's bytes; the chapter's BPE: 1024)", 2, 65536);
    cli.add("--threads", threads, "BLAS threads", 1, 256);
    cli.add("--steps", steps, "timed steps (0: 20 for throughput and 10 a rung for project)", 0, 100'000);
    std::string device = "cpu";
    cli.add("--device", device, "where the models train (gpu: the GPU model of common/gpu/gpu_model.hpp; exit 77 without one)", {"cpu", "gpu"});
    Engine engine = Engine::fast;
    add_engine_flag(cli, engine);
    return run_program(cli, argc, argv, [&] {
        std::string load;  // 1, 5 and 15 min load averages, then running/total tasks and the last pid
        std::getline(std::ifstream("/proc/loadavg"), load);
        std::cout << "machine load: " << load << "\n";
        const Device where = device_for(device);
        const std::string on = where == Device::gpu ? gpu_description() : std::to_string(threads) + " thread(s)";
        fix_blas_threads(threads);
        if (command == "throughput") {
            LmSetup s = lm_setup("ladder", full ? LmSize::full : LmSize::standard);
            s.device = where, s.engine = engine;
            const double rate = ladder_block_tokens_per_s(static_cast<std::size_t>(vocab), s, steps > 0 ? steps : 20, threads);
            std::cout << "width " << s.d_model << ", context " << s.T << ", batch " << s.batch << ", vocabulary " << vocab
                      << ", " << on << ": tokens/s " << static_cast<long long>(rate) << "\n";
        } else if (command == "project") {
            LmSetup s = lm_setup("ladder", LmSize::full);
            s.device = where, s.engine = engine;
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
        fix_blas_threads(0);
    });
}
