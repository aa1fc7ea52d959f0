// Section 9.3 — "Attention nhiều đầu": multi-head attention.
//
// Instead of one attention over d dimensions, h heads each attend over d_k = d/h dimensions, in
// parallel, and W_o mixes their concatenated outputs. The split is along the feature axis; the scale is
// √d_k of one head, not √d; the parameters stay 4d² whatever h is; and computing h heads costs about
// what one full-width head costs. What the heads buy is several softmax rows per position: one head
// holds one answer to "what matters here", four can attend to several places at once. The sub-layer's
// measurements are sublayer.cpp's, the pronoun task's comparison (C14) one_vs_four.cpp's, each claim's
// criterion claims.cpp's; this file runs them in the section's order.
#include <cmath>
#include <iostream>

#include "05_multi_head/multi_head.hpp"
#include "chapters/05_multi_head/claims.hpp"
#include "chapters/05_multi_head/one_vs_four.hpp"
#include "chapters/05_multi_head/sublayer.hpp"
#include "core/heads.hpp"
#include "core/rng.hpp"
#include "math/stats.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/table.hpp"
#include "report/training.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

using namespace attn;
using namespace attn::sec05;  // this section's experiments (chapters/05_multi_head/)

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int n_seeds = 3;
    PronounSetup setup;
    int T = 512;
    bool no_timing = false, mine = false;
    std::string svg_path = "05_multi_head.svg";
    Cli cli("05_multi_head", "Section 9.3 — Multi-head attention (Attention nhiều đầu)");
    cli.add("--seed", seed, "random seed (data, initialisation, batches)");
    cli.add("--seeds", n_seeds, "C14 is decided over this many seeds, --seed and the ones after it (default 3, about 15 s a seed; "
            "one seed decides nothing)", 1, 100);
    cli.add("--steps", setup.steps, "training steps for each model on the pronoun task; the default learns it, 100000 take an hour",
            1, 100'000);
    cli.add("--T", T, "tokens for the cost measurement; its h x T x T weights grow as T^2", 8, 8192);
    add_checkpoint_flags(cli, setup.checkpoints);
    add_engine_flag(cli, setup.engine);
    cli.add_switch("--no-timing", no_timing, "skip the wall-clock measurement (its numbers vary run to run)");
    cli.add_output("--svg", svg_path, "where to write held-out accuracy against step for one head and four heads");
    cli.add_switch("--mine", mine, "also run your exercises 5.1-5.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        setup.seed = seed;
        ClaimReport claims;

        // --- splitting the feature axis ------------------------------------------------------------------
        const Mat x = {{1, 2, 3, 4}, {5, 6, 7, 8}};  // (T = 2, d_model = 4)
        const Tensor3 heads = split_heads(x, 1, 2, 2);  // (h = 2, T = 2, d_head = 2)
        std::cout << "Splitting x (T = 2, d_model = 4) into h = 2 heads of d_head = 2: each head owns a slice of the features\n";
        std::cout << "  x:\n";
        print_matrix(std::cout, x, 0, "    ", 2);
        for (std::size_t h = 0; h < 2; ++h) {
            std::cout << "  head " << h << ":\n";
            print_matrix(std::cout, Mat(xt::view(heads, h)), 0, "    ", 2);
        }
        std::cout << "    merge_heads puts them back: max |diff| = " << fmt_sci(max_abs_diff(merge_heads(heads, 1, 2, 2), x)) << "\n\n";

        // --- the scale is √d_k of a head, not √d (C13) ---------------------------------------------------
        const std::size_t d = 512, h = 8, dh = d / h;
        Rng rng(seed, 5);
        const Mat q = rng.normal_mat(256, d), k = rng.normal_mat(256, d);  // (T, d), N(0, 1) entries
        const Tensor3 scores = per_head_scores(q, k, h);  // (h, T, T)
        const double var = variance_of(scores.data(), scores.size());
        std::cout << "d_model = " << d << ", h = " << h << ": d_k = d_model / h = " << dh << ", so scores are divided by sqrt("
                  << dh << ") = " << fmt(std::sqrt(dh), 0) << ", not sqrt(" << d << ") = " << fmt(std::sqrt(d), 2) << "\n";
        std::cout << "  per-head scores of random q, k: variance " << fmt(var, 1) << "; / " << fmt(std::sqrt(dh), 0) << " → "
                  << fmt(var / dh, 3) << "; / " << fmt(std::sqrt(d), 2) << " → " << fmt(var / d, 3) << " (too flat)\n";
        // The divisor inside the forward itself: an 8-head SelfAttention on 32 tokens x, its weights against
        // softmax(q_h k_hᵀ / 8) and against softmax(q_h k_hᵀ / √512), each computed by hand from x W_q and x W_k.
        const Mat x32 = xt::view(q, xt::range(0, 32), xt::all());  // (32, d): 32 of those random rows as tokens
        SplitFigures split{.d_model = d,
                           .n_heads = h,
                           .score_variance = var,
                           .off_by_dk = forward_vs_divisor(x32, h, std::sqrt(static_cast<double>(dh)), seed),
                           .off_by_d = forward_vs_divisor(x32, h, std::sqrt(static_cast<double>(d)), seed),
                           .params = {}};
        std::cout << "  the 8-head forward's weights vs softmax(q_h k_h^T / " << fmt(std::sqrt(dh), 0) << ") by hand: max |diff| = "
                  << fmt_sci(split.off_by_dk) << "; vs / " << fmt(std::sqrt(d), 2) << ": " << fmt(split.off_by_d, 3) << "\n\n";

        std::cout << "Parameters of W_q, W_k, W_v, W_o for d_model = " << d << ", counted from the model's tensors\n";
        Table pt(std::cout, {{"heads", 7, 0}, {"d_k", 6, 0}, {"scale", 8, 2}, {"parameters", 13, 0}, {"4 d^2", 11, 0}}, "  ");
        pt.header();
        for (std::size_t nh : {1u, 2u, 4u, 8u, 16u}) {
            split.params.push_back(attention_params(d, nh));
            pt.row({nh, d / nh, std::sqrt(static_cast<double>(d / nh)), split.params.back(), 4 * d * d});
        }
        claims.add(c13_claim(split));

        // --- h heads cost about one full-width head (measured) -------------------------------------------
        if (!no_timing) print_cost_table(std::cout, rng.normal_mat(static_cast<std::size_t>(T), d), rng);

        // --- one head without W_o vs four heads with W_o on the pronoun task (C14) ---------------------------
        // The chapter's comparison (one_vs_four.hpp): W_o and its bias added, d² + d parameters; the block is 10_block's.
        const PronounTask task = make_pronoun_task(PronounVersion::role, seed);
        std::cout << "\nThe pronoun task: \"" << task.words(task.heldout.front()) << "\"\n";
        std::cout << "  " << task.train.size() << " training sentences; " << task.heldout.size()
                  << " held-out ones whose noun pairs appear in training only in the other order\n";
        std::cout << "  each model: embeddings, causal attention, an MLP, pre-norm LayerNorms; " << setup.steps << " steps\n";
        // The same two models at the other seeds (each its own task split, initialisation and batches) train side by
        // side with --seed's, every model on a core of its own in turn: the same bits as one after the other.
        const std::vector<OneVsFour> seeds_run = train_one_vs_four_seeds(seed, static_cast<std::size_t>(n_seeds), setup);
        const PronounRun &one = seeds_run.front().one, &four = seeds_run.front().four;
        Table rt(std::cout, {{"model", 18}, {"parameters", 12, 0}, {"train acc", 11, 3}, {"held-out acc", 14, 3}, {"wrong noun", 12, 3}}, "  ");
        rt.header();
        for (const PronounRun* r : {&one, &four})
            rt.row({r->name, r->params, r->train.accuracy, r->heldout.accuracy, r->heldout.wrong_noun});
        const std::size_t dm = setup.d_model, extra = four.params - one.params;
        std::cout << "  Four heads cost " << fmt_count(static_cast<long long>(extra)) << " more parameters: W_o and its bias, d^2 + d = "
                  << fmt_count(static_cast<long long>(dm * dm + dm)) << " at d = " << dm << " (16,512 at the chapter's d = 128);\n"
                  << "  and four softmax rows per position instead of one.\n";
        HeadsOverSeeds over_seeds{.seeds = {}, .gaps = {}, .d_model = dm, .extra_params = extra, .steps = setup.steps};
        for (int i = 0; i < n_seeds; ++i) {
            over_seeds.seeds.push_back(seed + static_cast<std::uint64_t>(i));
            over_seeds.gaps.push_back(heldout_gap(seeds_run[static_cast<std::size_t>(i)]));
        }
        add_c14_claim(claims, over_seeds);

        const std::string loss_svg = draw_one_vs_four(seeds_run.front(), svg_path);
        std::cout << "\nwrote " << svg_path << " (held-out accuracy against training step) and " << loss_svg << " (the loss curves)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 5.1 split_heads(x, 2), head 1",
                         [&] { return ex::split_heads(x, 2).at(1); }, Mat(xt::view(heads, 1)), 0);
            compare_mine(std::cout, "exercise 5.2 merge_heads(split)", [&] {
                std::vector<Mat> parts = {Mat(xt::view(heads, 0)), Mat(xt::view(heads, 1))};
                return ex::merge_heads(parts);
            }, x, 0);
            compare_mine(std::cout, "exercise 5.3 attention_param_count(512, 8, no bias)",
                         [&] { return static_cast<double>(ex::attention_param_count(512, 8, ex::Biases::none)); },
                         static_cast<double>(attention_params(512, 8)), 0);
        }
        claims.print(std::cout);
    });
}
