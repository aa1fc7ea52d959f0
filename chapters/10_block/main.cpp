// Sections 9.5, 9.7 and 9.8 — the full block, the three kinds of attention, and the n² wall
// (Khối Transformer đầy đủ; Encoder, decoder; Bức tường n²).
//
// The pre-norm block of GPT-2, stacked with a token table, a position table and an output layer tied to
// the token table; its size, counted from the tensors of a GPT-2-small-shaped model; attention
// unmasked (encoder), causal (decoder) and across two sequences (cross-attention); the cost of the
// one n×n matrix per head, measured at growing n, and the tiled attention that never builds it; and the
// uniform average, one block and two on the pronoun task (C35, C36), at one seed or over --seeds.
// Each part is a file beside this one: traced_block.cpp, gpt2_small.cpp (C30's count), three_kinds.cpp,
// nsquared.cpp (the n² table), pronoun_table.cpp and maps.cpp (the pronoun task); each claim's criterion
// claims.cpp's. This file reads the flags and runs them in the sections' order.
#include <algorithm>
#include <iostream>

#include "10_block/block.hpp"
#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "chapters/10_block/claims.hpp"
#include "chapters/10_block/gpt2_small.hpp"
#include "chapters/10_block/maps.hpp"
#include "chapters/10_block/nsquared.hpp"
#include "chapters/10_block/pronoun_table.hpp"
#include "chapters/10_block/three_kinds.hpp"
#include "chapters/10_block/traced_block.hpp"
#include "core/rng.hpp"
#include "gpu/placement.hpp"
#include "math/online_softmax.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/explorer.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "report/training.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

using namespace attn;
using namespace attn::sec10;  // this section's experiments (chapters/10_block/)
using namespace attn::sec04;  // the pronoun task's experiments (chapters/04_learned_attention/)

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int steps = 3000, n_seeds = 2, min_T = 128, max_T = 4096, reps = 3;
    bool no_timing = false, mine = false;
    double budget_mb = default_memory_budget_mb();
    std::string svg_path = "10_block.svg", dump_dir;
    Cli cli("10_block", "Sections 9.5, 9.7, 9.8 — The full block, encoder and decoder, the n^2 wall (Khối Transformer đầy đủ)");
    cli.add("--seed", seed, "random seed (weights, data, batches)");
    cli.add("--steps", steps, "training steps for each model on the pronoun task; the default learns it, 100000 take an hour",
            1, 100'000);
    cli.add("--seeds", n_seeds, "pronoun task: C35 and C36 are decided over this many seeds, --seed and the ones after it, each "
            "one's accuracies and C36 parts printed (default 2: about 40 s of one core a seed, every model on a core of its own in turn; "
            "one seed decides nothing)", 1, 100);
    Checkpoints checkpoints;
    add_checkpoint_flags(cli, checkpoints);
    Engine engine = Engine::reference;
    add_engine_flag(cli, engine);
    std::string device = "cpu";
    cli.add("--device", device,
            "where the pronoun task's models train: the gpu runs the same models and loop on a CUDA device (these models are tiny: "
            "it shows the loop, not speed); without a GPU, gpu says so and exits 77",
            {"cpu", "gpu"});
    cli.add("--min-T", min_T, "smallest n of the n^2 table; rows past --memory-mb are reported, not run", 16, 1 << 20);
    cli.add("--max-T", max_T, "largest n of the n^2 table (rows double from --min-T); 16384 shows the wall", 16, 1 << 20);
    cli.add("--reps", reps, "timings per row (the best is kept); a few suffice", 1, 100);
    cli.add("--memory-mb", budget_mb, "memory budget for the n^2 table: rows needing more are reported OUT OF MEMORY; 1 MiB to 1 TiB",
            1, 1 << 20);
    cli.add_switch("--no-timing", no_timing, "skip the n^2 table (its milliseconds vary run to run)");
    cli.add("--dump", dump_dir, "write a random input, the traced block's weights and its output as .npy files into this folder");
    cli.add_output("--svg", svg_path, "where to write the attention maps of one block and of two");
    cli.add_switch("--mine", mine, "also run your exercises 10.1-10.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        require(min_T <= max_T, "10_block", "--min-T " + std::to_string(min_T) + " exceeds --max-T " + std::to_string(max_T));
        const Device where = device_for(device);
        std::cout << cli.title() << "\n\n";
        if (where == Device::gpu) std::cout << "--device gpu: the pronoun task's models train on " << gpu_description() << "\n\n";
        ClaimReport claims;
        Rng rng(seed, 10);

        // --- the pre-norm block, traced ------------------------------------------------------------------
        show_traced_block(std::cout, rng, seed, dump_dir);

        // --- GPT-2 small, counted from a model's tensors (C30) ---------------------------------------------
        const Gpt2Count gpt2 = count_gpt2_small();
        print_gpt2_count(std::cout, gpt2);
        claims.add(c30_claim(gpt2));

        // --- three kinds of attention (Section 9.7) -----------------------------------------------------------
        show_three_kinds(std::cout, rng);

        // --- the n² wall (C31) --------------------------------------------------------------------------------
        if (no_timing) {
            claims.skip("C31", "--no-timing skips the n^2 table");
        } else {
            const WallTables rows = print_wall_tables(std::cout, {.min_T = static_cast<std::size_t>(min_T), .max_T = static_cast<std::size_t>(max_T),
                                                                  .budget_mb = budget_mb, .reps = reps, .seed = seed});
            const WallExponents e = wall_exponents(rows.materialised, rows.tiled);
            std::cout << "\n  fitted exponent (log-log slope, last " << std::min<std::size_t>(4, rows.materialised.size()) << " rows): materialised time ~ n^" << fmt(e.t_mat, 2) << ", memory ~ n^"
                      << fmt(e.m_mat, 2) << "; projections ~ n^" << fmt(e.t_proj, 2) << "; tiled time ~ n^" << fmt(e.t_tile, 2)
                      << ", memory ~ n^" << fmt(e.m_tile, 2) << "\n";
            std::cout << tiling_sentence(e) << "\n";
            claims.add(c31_claim(e));
        }

        // --- the uniform average, one block and two on the pronoun task (C35, C36) ----------------------------
        PronounSetup setup;
        setup.steps = steps, setup.checkpoints = checkpoints, setup.device = where, setup.engine = engine;
        // Every model of every seed trains side by side on the cores (the same bits as one after the other); runs[0] is
        // --seed: its tables and maps are the ones shown.
        const std::vector<PronounSeed> runs = run_pronoun_seeds(seed, static_cast<std::size_t>(n_seeds), setup);
        const PronounSeed& run = runs.front();
        const PronounTask task = make_pronoun_task(PronounVersion::role, seed);
        print_pronoun_table(std::cout, run, task, setup);  // and the task's analogue of C37, not a verdict

        // C36: the attention rows at "so the" of the two-block model, averaged and per head (chapters/10_block/maps.cpp)
        show_pronoun_maps(std::cout, run, task, svg_path);

        if (n_seeds > 1) print_pronoun_seeds(std::cout, runs);

        add_pronoun_claims(claims, runs, setup);  // C35, C36 over the seeds (chapters/10_block/claims.cpp)
        std::cout << "\nwrote " << svg_path << " (the attention maps of one block and of two, averaged over heads), "
                  << svg::sibling(svg_path, "_heads_tired") << " and " << svg::sibling(svg_path, "_heads_wet") << " (each head of the two blocks)\n";
        write_pronoun_explorer(run, task, explorer::path_beside(svg_path));
        std::cout << "wrote " << explorer::path_beside(svg_path) << " (open it in a browser: where each head looks in the pronoun sentences, and what each model "
                  << "expected next)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 10.1 gpt2_param_count(50257, 1024, 768, 12)",
                         [&] { return static_cast<double>(ex::gpt2_param_count(50257, 1024, 768, 12)); }, static_cast<double>(gpt2.total), 0);
            compare_mine(std::cout, "exercise 10.2 attention_matrix_bytes(1, 8, 16384)",
                         [&] { return static_cast<double>(ex::attention_matrix_bytes(1, 8, 16384)); }, 8.0 * 16384 * 16384 * 4, 0);
            const Mat s = rng.normal_mat(1, 8), v = rng.normal_mat(8, 3);
            auto fold = [&](auto update) {
                OnlineSoftmax st = online_softmax_start();
                Mat acc = xt::zeros<float>({std::size_t{1}, std::size_t{3}}), out = acc;
                for (int j0 = 0; j0 < 8; j0 += 3) st = update(st, s.data() + j0, std::min(3, 8 - j0), v.data() + j0 * 3, acc.data());
                online_softmax_finish(st, acc.data(), out.data(), 3);
                return out;
            };
            const Mat want = fold([](OnlineSoftmax st, const float* sc, int n, const float* vv, float* acc) {
                return online_softmax_update(st, sc, n, vv, 3, acc, 3);
            });
            compare_mine(std::cout, "exercise 10.3 online_softmax_tile, 8 keys in tiles of 3", [&] {
                return fold([](OnlineSoftmax st, const float* sc, int n, const float* vv, float* acc) {
                    return ex::online_softmax_tile(st, sc, n, vv, 3, acc);
                });
            }, want, 1e-6);
        }
        claims.print(std::cout);
    });
}
