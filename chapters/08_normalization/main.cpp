// Section 9.5 — LayerNorm in the block: pre-norm against post-norm (Cấu trúc một khối Transformer).
//
// GPT-2's block normalises the input of each sub-layer and leaves the residual path alone:
//     x ← x + MHA(LN(x));   x ← x + FFN(LN(x))                      (pre-norm)
// The 2017 paper put the LayerNorm on the residual path itself:
//     x ← LN(x + MHA(x));   x ← LN(x + FFN(x))                      (post-norm)
// The program shows the difference three ways: in the structure (a block whose sub-layers output
// nothing is the identity under pre-norm, a normaliser under post-norm), in the gradients of a
// 12-block stack at initialisation, and in training with and without learning-rate warmup. The experiments
// are norm_placement.cpp's and warmup.cpp's, the gradient table gradient_table.cpp's, each claim's criterion
// claims.cpp's (C24's warmup.cpp's, which 12_language_model shares); this file runs them in the section's order.
#include <cmath>
#include <iostream>

#include "08_normalization/normalization.hpp"
#include "chapters/08_normalization/claims.hpp"
#include "chapters/08_normalization/gradient_table.hpp"
#include "chapters/08_normalization/norm_placement.hpp"
#include "chapters/08_normalization/warmup.hpp"
#include "core/rng.hpp"
#include "math/stats.hpp"
#include "reference/layers.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "report/training.hpp"
#include "text/corpus.hpp"
#include "train/train.hpp"

using namespace attn;
using namespace attn::sec08;  // this section's experiments (chapters/08_normalization/)

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int steps = 150, seeds = 8;
    bool quick = false, mine = false;
    std::string svg_path = "08_normalization.svg", corpus_name = "shakespeare";
    Cli cli("08_normalization", "Section 9.5 — LayerNorm: pre-norm vs post-norm (Cấu trúc một khối Transformer)");
    cli.add("--seed", seed, "random seed (initialisation, batches)");
    cli.add("--steps", steps, "training steps for each of the four warmup runs, a fifth of them warmup (the chapter: 1000 and 200); "
                           "100000 take hours", 1, 100'000);
    Checkpoints checkpoints;
    add_checkpoint_flags(cli, checkpoints);
    Engine engine = Engine::reference;
    add_engine_flag(cli, engine);
    cli.add("--seeds", seeds, "models averaged for the gradient norms at initialisation, under each of two initialisations; each is a "
                             "12-block model, and their spread sizes C23's tolerance", 2, 64);
    cli.add_switch("--quick", quick, "shorter windows, batch and runs (seconds), for tests: the shapes, not the chapter's size");
    cli.add("--corpus", corpus_name, kCorpusHelp);
    cli.add_output("--svg", svg_path, "where to write gradient norm per block (and, beside it, the loss curves)");
    cli.add_switch("--mine", mine, "also run your exercises 8.1-8.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        ClaimReport claims;
        Rng rng(seed, 8);

        // --- LayerNorm, one row --------------------------------------------------------------------------
        const std::size_t d = 8;
        Parameters ln;
        reference::LayerNorm layernorm(ln, "ln", d);  // gain 1, bias 0
        const Param &gain = ln["ln.gain"], &bias = ln["ln.bias"];
        const Mat row = rng.normal_mat(1, d) * 3.0f + 5.0f;  // (1, d)
        const Mat normed = layernorm.forward(row, 1);
        std::cout << "LayerNorm normalises each token's features: y = gain * (x - mean) / sqrt(var + eps) + bias\n  x:      ";
        for (float v : row) std::cout << fmt(v, 3) << " ";
        std::cout << "  (mean " << fmt(mean_of(row.data(), d), 3) << ", std " << fmt(std::sqrt(variance_of(row.data(), d)), 3) << ")\n  LN(x):  ";
        for (float v : normed) std::cout << fmt(v, 3) << " ";
        std::cout << "  (mean " << fmt(mean_of(normed.data(), d), 3) << ", std " << fmt(std::sqrt(variance_of(normed.data(), d)), 3)
                  << ")\n\n";

        // --- where the LayerNorm sits (C22) --------------------------------------------------------------
        const std::size_t B = 2, T = 6, dm = 32;
        std::cout << "A block whose sub-layers output nothing (W_o, b_o, W_2, b_2 set to zero), on x of shape (B*T, d) = ("
                  << B * T << ", " << dm << ") at two scales\n";
        Table st(std::cout, {{"block", 11}, {"x scale", 9, 0}, {"max |y - x|", 13, 7}, {"max |row mean|", 16, 4},
                             {"row std", 20}}, "  ");
        st.header();
        std::vector<BlockStructure> zeroed[2];  // pre-norm's, post-norm's, at each scale
        for (Norm norm : {Norm::pre, Norm::post})
            for (float scale : {1.0f, 10.0f}) {
                const Mat x = rng.normal_mat(B * T, dm) * scale + 0.5f * scale;
                const BlockStructure s = zeroed_block_structure(norm, x, B, T, 4, seed);
                zeroed[norm == Norm::pre ? 0 : 1].push_back(s);
                st.row({norm == Norm::pre ? "pre-norm" : "post-norm", static_cast<double>(scale), s.identity_error, s.max_row_mean,
                        fmt(s.min_row_std, 4) + " .. " + fmt(s.max_row_std, 4)});
            }
        std::cout << "  Pre-norm: y = x exactly — the path from input to output is never normalised, so a block can\n"
                  << "  start as the identity and add to it. Post-norm: every row leaves with mean 0 and std 1,\n"
                  << "  whatever came in — the LayerNorm sits on the residual path itself.\n\n";
        claims.add(c22_claim(zeroed[0], zeroed[1]));

        // --- gradient norm per block at initialisation (C23) -----------------------------------------------
        const Corpus corpus = named_corpus(corpus_name, {.tokenizer = Tokenizer::bytes}, 300'000);
        // The chapter's stack is 12 blocks of width 128; --quick keeps them and shortens the windows, the batch and the run.
        const std::size_t layers = 12, width = 128, window = quick ? 16 : 32, batch = quick ? 8 : 16;
        if (quick) seeds = std::min(seeds, 5);  // C23 averages at least 5 models per case
        const ModelSize stack{.vocab = corpus.vocab_size(), .max_T = window, .d_model = width, .n_heads = 4, .n_layers = layers};
        std::cout << "Corpus: " << corpus.source << ", " << fmt_count(static_cast<long long>(corpus.bytes)) << " bytes, "
                  << corpus.vocab_size() << " byte tokens; a stack of " << layers << " blocks, d_model = " << width
                  << ", 4 heads, windows of " << window << " tokens, batch " << batch << "\n\n";
        // [0] under PyTorch's initialisation (the chapter's), [1] under GPT-2's
        const std::vector<InitGradients> profile =
            print_init_gradients(std::cout, stack, corpus.train, {.batch = batch, .seed = seed, .models = seeds}, svg_path);
        claims.add(c23_claim(profile[0], profile[1]));

        // --- training with and without warmup (C24) --------------------------------------------------------
        const int run_steps = quick ? std::min(steps, 60) : steps, warmup = run_steps / 5;
        const LmSetup train{.d_model = width, .T = window, .batch = batch, .n_heads = 4, .steps = run_steps, .lr = 3e-3f, .clip = 0,
                            .eval_windows = 64, .seed = seed, .checkpoints = checkpoints, .engine = engine};
        std::cout << "Training the stack for " << run_steps << " steps at learning rate 3e-3 (AdamW, no gradient clipping),\n"
                  << "with and without " << warmup << " steps of linear warmup; held-out perplexity:\n";
        Table tt(std::cout, {{"", 28}, {"perplexity", 12, 2}, {"last loss", 11, 3}}, "  ");
        const std::vector<WarmupRun> runs = run_warmup(corpus, train, {.n_layers = layers, .warmup = warmup});
        for (const WarmupRun& r : runs) tt.row({r.run.name, r.run.heldout.perplexity, r.run.log.losses.back()});
        const WarmupVerdict verdict = warmup_verdict(runs, quick ? WarmupCriterion::rescue_only : WarmupCriterion::as_stated);
        std::cout << "  Post-norm without warmup is " << fmt(verdict.post / verdict.pre, 1) << " times pre-norm's perplexity; with warmup "
                  << fmt(verdict.post_warmup / verdict.pre, 2) << " times: warmup "
                  << (verdict.matches ? "brings post-norm level with pre-norm" : verdict.rescued ? "rescues post-norm, not to pre-norm's level" : "does not rescue post-norm")
                  << ", and pre-norm " << (verdict.pre_needs_none ? "does not need it" : "moves by " + fmt(100 * std::fabs(verdict.pre_warmup / verdict.pre - 1), 1) + " % with it")
                  << ".\n";
        add_c24_claim(claims, verdict,
                      {.corpus = corpus.source, .layers = layers, .width = width, .window = window, .batch = batch, .steps = run_steps,
                       .warmup = warmup, .default_steps = steps, .quick = quick});
        std::vector<svg::Series> curves;
        const char* run_colours[4] = {"#1f77b4", "#17becf", "#d62728", "#ff7f0e"};
        for (int i = 0; i < 4; ++i) curves.push_back(loss_curve(runs[i].run.name, runs[i].run.log.losses, 10, run_colours[i], i % 2 == 1));
        const std::string loss_svg = svg::sibling(svg_path, "_loss");
        svg::write_file(loss_svg, svg::line_plot(curves, {"Training loss, 12 blocks, lr 3e-3 (mean of 10 steps)", "step", "loss"}));
        std::cout << "\nwrote " << svg_path << " (gradient norm per block) and " << loss_svg << " (the four loss curves)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 8.1 layernorm of the row above", [&] { return ex::layernorm(row, gain.value, bias.value); },
                         normed, 1e-5);
            const Mat dy = rng.normal_mat(1, d);
            const Mat dx = layernorm.backward(dy);  // of the row's forward above (its gain and bias gradients: not compared)
            compare_mine(std::cout, "exercise 8.2 layernorm_backward of the row above", [&] { return ex::layernorm_backward(row, gain.value, dy); },
                         dx, 1e-4);
            const std::function<Mat(const Mat&)> f = [](const Mat& a) { return Mat(xt::tanh(a)); };
            const std::function<Mat(const Mat&)> norm = [&](const Mat& a) { return layernorm.forward(a, 1); };
            compare_mine(std::cout, "exercise 8.3 residual_sublayer, post-norm", [&] { return ex::residual_sublayer(row, f, norm, Norm::post); },
                         norm(Mat(row + f(row))), 1e-5);
        }
        claims.print(std::cout);
    });
}
