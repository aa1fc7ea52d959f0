// Sections 9.5, 9.7 and 9.8 — the full block, the three kinds of attention, and the n² wall
// (Khối Transformer đầy đủ; Encoder, decoder; Bức tường n²).
//
// The pre-norm block of GPT-2, stacked with a token table, a position table and an output layer tied to
// the token table; its size, counted from the tensors of a GPT-2-small-shaped model; attention
// unmasked (encoder), causal (decoder) and across two sequences (cross-attention); the cost of the
// one n×n matrix per head, measured at growing n, and the tiled attention that never builds it; and the
// uniform average, one block and two on the pronoun task (C35, C36), at one seed or over --seeds.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

#include "10_block/block.hpp"
#include "attn/attention.hpp"
#include "attn/claims.hpp"
#include "attn/cli.hpp"
#include "attn/mine.hpp"
#include "attn/npy.hpp"
#include "attn/online_softmax.hpp"
#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"
#include "attn/svg.hpp"
#include "attn/table.hpp"
#include "attn/device.hpp"
#include "attn/train.hpp"
#include "attn/model.hpp"
#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "chapters/10_block/claims.hpp"
#include "chapters/10_block/maps.hpp"
#include "chapters/10_block/nsquared.hpp"

using namespace attn;
using namespace attn::sec10;  // this section's experiments (chapters/10_block/)
using namespace attn::sec04;  // the pronoun task's experiments (chapters/04_learned_attention/)

namespace {
std::string shape_of(const std::vector<std::size_t>& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += std::to_string(s[i]) + (i + 1 < s.size() ? ", " : ")");
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int steps = 3000, n_seeds = 5, min_T = 128, max_T = 4096, reps = 3;
    bool no_timing = false, mine = false;
    double budget_mb = default_memory_budget_mb();
    std::string svg_path = "10_block.svg", dump_dir;
    Cli cli("10_block", "Sections 9.5, 9.7, 9.8 — The full block, encoder and decoder, the n^2 wall (Khối Transformer đầy đủ)");
    cli.add("--seed", seed, "random seed (weights, data, batches)");
    cli.add("--steps", steps, "training steps for each model on the pronoun task; the default learns it, 100000 take an hour",
            1, 100'000);
    cli.add("--seeds", n_seeds, "pronoun task: C35 and C36 are decided over this many seeds, --seed and the ones after it, each "
            "one's accuracies and C36 parts printed (default 5, about 30 s a seed; one seed decides nothing)", 1, 100);
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
    cli.add("--svg", svg_path, "where to write the attention maps of one block and of two");
    cli.add_switch("--mine", mine, "also run your exercises 10.1-10.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        require(min_T <= max_T, "10_block", "--min-T " + std::to_string(min_T) + " exceeds --max-T " + std::to_string(max_T));
        const Device where = device_for(device);
        std::cout << cli.title() << "\n\n";
        if (where == Device::gpu) std::cout << "--device gpu: the pronoun task's models train on " << gpu_description() << "\n\n";
        ClaimReport claims;
        Rng rng(seed, 10);

        // --- the pre-norm block, traced ------------------------------------------------------------------
        const std::size_t B = 2, T = 8, V = 50;
        const ModelConfig small = gpt2_config({.vocab = V, .max_T = T, .d_model = 64, .n_heads = 4, .n_layers = 2});
        Model stack(small, seed);
        std::vector<int> tokens(B * T), targets(B * T);
        for (std::size_t i = 0; i < B * T; ++i) tokens[i] = static_cast<int>(rng.below(V)), targets[i] = static_cast<int>(rng.below(V));
        stack.forward(tokens, targets, B, T);
        std::cout << "A stack of " << small.n_layers << " pre-norm blocks, d_model = " << small.d_model << ", " << small.n_heads
                  << " heads, on B = " << B << " sequences of T = " << T << " tokens; block 1 as it ran:\n";
        Table tr(std::cout, {{"tensor", 34}, {"shape", 16}, {"", 1}}, "  ");
        tr.header();
        for (const auto& t : stack.block(0).trace()) tr.row({t.name, shape_of(t.shape), "  " + t.meaning});
        std::cout << "  then block 2 on y, LN_f, and logits = LN_f(y) wte^T: " << shape_of({B * T, V})
                  << " — the output layer is the token table read backwards (tied)\n\n";

        if (!dump_dir.empty()) {
            // The block's input (rows of B·T tokens), every weight of block 1, and its output, as .npy.
            Rng dump_rng(seed, 0xd);  // its own stream: --dump leaves every other number printed unchanged
            const Mat x = dump_rng.normal_mat(B * T, small.d_model);
            const Mat y = stack.block_forward(0, x, B, T);
            write_npy(dump_dir, "x", x);
            std::size_t files = 2;
            for (const Param& p : stack.params().all())
                if (p.name.rfind("block0.", 0) == 0) write_npy(dump_dir, p.name, p.value), ++files;
            write_npy(dump_dir, "y", y);
            std::cout << "--dump: wrote " << files << " .npy files to " << dump_dir << ": x (" << B * T << ", " << small.d_model
                      << "), B = " << B << " sequences of T = " << T << ", the weights of block 1 (block0.*; y = x W + b, W is\n"
                      << "  (in, out); LayerNorm eps 1e-5; exact GELU; causal, " << small.n_heads << " heads) and its output y\n\n";
        }

        // --- GPT-2 small, counted from a model's tensors (C30) ---------------------------------------------
        const ModelConfig gpt2 = gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = 768, .n_heads = 12, .n_layers = 12});
        Model model(gpt2, seed);  // 124 M parameters, fp32, with their gradients: about 1 GB
        Parameters& p = model.params();
        const std::size_t wte = p["wte"].value.size(), wpe = p["wpe"].value.size(), block = model.block(0).param_count();
        const std::size_t blocks = block * gpt2.n_layers, lnf = p.count({"lnf.gain", "lnf.bias"}), total = p.count();
        const std::size_t three_biases = p.count({"block0.b_q", "block0.b_k", "block0.b_v"});
        std::cout << "GPT-2 small (d = 768, 12 blocks, vocabulary 50,257, context 1,024, output tied), counted from the\n"
                  << "tensors of a model built in memory:\n";
        Table gt(std::cout, {{"", 22}, {"", 18}, {"", 14}}, "  ");
        gt.row({"token embeddings", "50,257 x 768 =", fmt_count(static_cast<long long>(wte))});
        gt.row({"position embeddings", " 1,024 x 768 =", fmt_count(static_cast<long long>(wpe))});
        gt.row({"one block", "", fmt_count(static_cast<long long>(block))});
        gt.row({"12 blocks", "", fmt_count(static_cast<long long>(blocks))});
        gt.row({"final LayerNorm", "2 x 768 =", fmt_count(static_cast<long long>(lnf))});
        gt.row({"total (weights tied)", "", fmt_count(static_cast<long long>(total))});
        const std::size_t d = 768;
        std::cout << "  12 d^2 + 13 d at d = 768 is " << fmt_count(static_cast<long long>(12 * d * d + 13 * d))
                  << "; dropping the biases of three of W_q, W_k, W_v, W_o saves " << fmt_count(static_cast<long long>(three_biases))
                  << " per block.\n  The token table is " << fmt(100.0 * static_cast<double>(wte) / static_cast<double>(total), 1)
                  << " % of the model: the vocabulary's size is an architectural decision.\n\n";
        claims.add(c30_claim({.block = block, .wte = wte, .wpe = wpe, .lnf = lnf, .total = total, .three_biases = three_biases}));

        // --- three kinds of attention (Section 9.7) -----------------------------------------------------------
        const std::size_t T_src = 5, T_tgt = 3, dk = 4;
        const Mat src = rng.normal_mat(T_src, dk), tgt = rng.normal_mat(T_tgt, dk);  // stand-ins for q = k = v projections
        const AttentionSteps encoder = attention(src, src, src);
        const Mask causal = causal_mask(T_tgt);
        const AttentionSteps decoder = attention(tgt, tgt, tgt, &causal);
        const AttentionSteps cross = attention(tgt, src, src);
        std::cout << "Three kinds of attention (Section 9.7), on a source of " << T_src << " tokens and a target of " << T_tgt << ":\n";
        std::cout << "  encoder self-attention, unmasked: q, k, v from the source; weights " << shape_str(encoder.weights)
                  << ", every row sees every token\n";
        print_matrix(std::cout, encoder.weights, 2, "    ");
        std::cout << "  decoder self-attention, causal: q, k, v from the target; weights " << shape_str(decoder.weights)
                  << ", zero above the diagonal\n";
        print_matrix(std::cout, decoder.weights, 2, "    ");
        std::cout << "  cross-attention: q from the target, k and v from the source; weights " << shape_str(cross.weights)
                  << " (T_target x T_source), out " << shape_str(cross.out) << "\n";
        print_matrix(std::cout, cross.weights, 2, "    ");
        std::cout << "  A decoder-only model (GPT) keeps only the second kind: one sequence, causal throughout.\n\n";

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
            std::cout << "  Only scores and weights are n x n. Tiling removes them from memory — the tiled peak grows like n —\n"
                      << "  but not from the arithmetic: its time is still quadratic.\n\n";
            claims.add(c31_claim(e));
        }

        // --- the uniform average, one block and two on the pronoun task (C35, C36) ----------------------------
        PronounSetup setup;
        setup.steps = steps, setup.checkpoints = checkpoints, setup.device = where, setup.engine = engine;
        std::vector<PronounSeed> runs;  // runs[0] is --seed: its tables and maps are the ones shown
        for (int i = 0; i < n_seeds; ++i) runs.push_back(run_pronoun_seed(seed + static_cast<std::uint64_t>(i), setup));
        const PronounSeed& run = runs.front();
        const PronounTask task = make_pronoun_task(PronounVersion::role, seed);
        std::cout << "The pronoun task (\"" << task.words(task.heldout.front()) << "\"): held-out pairs seen only in the other order\n"
                  << "  models: " << setup.d_model << " wide, 4 heads, FFN " << setup.d_ff << ", pre-norm, untied output; the uniform\n"
                  << "  average is the one-block model with equal weights in place of q . k; " << steps << " steps each\n";
        Table pt(std::cout, {{"model", 16}, {"train acc", 11, 3}, {"held-out acc", 14, 3}, {"wrong noun", 12, 3}, {"train loss", 12, 4},
                             {"held-out loss", 15, 4}}, "  ");
        pt.header();
        for (const auto& [name, fit] : {std::pair{"uniform average", &run.uniform}, {"one block", &run.one}, {"two blocks", &run.two}})
            pt.row({name, fit->train.accuracy, fit->heldout.accuracy, fit->heldout.wrong_noun, fit->train_loss, fit->heldout_loss});
        // Section 9.8's C37 (two blocks fit the training data better and held-out data worse) is a claim about the
        // language model on the corpus, checked in 12_language_model; here is its analogue on this task, not a verdict.
        std::cout << "  The pronoun-task analogue of C37 (whose home is the corpus, 12_language_model): two blocks' loss is "
                  << (run.two.train_loss < run.one.train_loss ? "lower" : "not lower") << " on the training sentences ("
                  << fmt(run.two.train_loss, 4) << " vs " << fmt(run.one.train_loss, 4) << ") and "
                  << (run.two.heldout_loss > run.one.heldout_loss ? "higher" : "not higher") << " on the held-out ones ("
                  << fmt(run.two.heldout_loss, 4) << " vs " << fmt(run.one.heldout_loss, 4) << ").\n";

        // C36: the attention rows at "so the" of the two-block model, averaged and per head (chapters/10_block/maps.cpp)
        show_pronoun_maps(std::cout, run, task, svg_path);

        if (n_seeds > 1) print_pronoun_seeds(std::cout, runs);

        add_pronoun_claims(claims, runs, setup);  // C35, C36 over the seeds (chapters/10_block/claims.cpp)
        std::cout << "\nwrote " << svg_path << " (the attention maps of one block and of two, averaged over heads), "
                  << svg::sibling(svg_path, "_heads_tired") << " and " << svg::sibling(svg_path, "_heads_wet") << " (each head of the two blocks)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 10.1 gpt2_param_count(50257, 1024, 768, 12)",
                         [&] { return static_cast<double>(ex::gpt2_param_count(50257, 1024, 768, 12)); }, static_cast<double>(total), 0);
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
