// Sections 9.1–9.8, the chapter's trained language models (003): the ladder from averaging to a full
// block, the √d_k ablation, post-norm's need for warmup, how four position schemes extrapolate, and one
// block against two.
//
//   12_language_model [ladder|scale|norm|positions|depth|all|bench] [flags]
//
// Each experiment trains small causal language models on a corpus — by default generated English-like
// stories (attn/corpus.hpp), or any UTF-8 text with --corpus — and reports held-out perplexity, exp of the
// mean next-byte cross-entropy on the last 10 % of the text. The models and the training loop are the
// library's (attn/model.hpp, train.hpp); the experiments are beside this file (sizes.hpp lists them), the
// norm experiment 08_normalization's (chapters/08_normalization/warmup.hpp). This file prints the chapter's
// tables from their results and checks each claim's shape: who beats whom.
// `bench` is not part of `all`: it times training (tokens/s), which varies run to run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include "09_positions/positions.hpp"
#include "attn/claims.hpp"
#include "attn/cli.hpp"
#include "attn/mine.hpp"
#include "attn/positions.hpp"
#include "attn/svg.hpp"
#include "attn/table.hpp"
#include "chapters/08_normalization/warmup.hpp"
#include "chapters/12_language_model/depth.hpp"
#include "chapters/12_language_model/ladder.hpp"
#include "chapters/12_language_model/position_extrapolation.hpp"
#include "chapters/12_language_model/scale_ablation.hpp"
#include "chapters/12_language_model/sizes.hpp"

using namespace attn;

namespace {

const char* const kColours[] = {"#7f7f7f", "#d62728", "#ff7f0e", "#bcbd22", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#1f77b4"};
const std::size_t kSmooth = 25;  // plot the mean of each 25 training losses: one batch's loss is noisy

svg::Series loss_curve(const LmRun& run, std::size_t i, bool dashed = false) {
    return attn::loss_curve(run.name, run.log.losses, kSmooth, kColours[i % 9], dashed);
}

std::string setup_line(const LmSetup& s) {
    return "width " + std::to_string(s.d_model) + ", context " + std::to_string(s.T) + ", " + std::to_string(s.steps) +
           " steps of AdamW at " + fmt_sci(s.lr, 0) + ", batch " + std::to_string(s.batch) +
           (s.clip > 0 ? ", gradient clipping at " + fmt(s.clip, 1) : ", no gradient clipping") + "; perplexity on " +
           std::to_string(s.eval_windows) + " held-out windows";
}

// "6.81 vs 13.44"
std::string vs(double a, double b) { return fmt(a, 2) + " vs " + fmt(b, 2); }

struct Context {
    const Corpus& corpus;
    LmSize size;
    std::uint64_t seed;
    int steps;  // 0: each experiment's own
    std::string svg;
    ClaimReport& claims;
    LmSetup setup(const std::string& experiment) const {
        LmSetup s = lm_setup(experiment, size);
        s.seed = seed;
        if (steps > 0) s.steps = steps;
        return s;
    }
};

// --- Sections 9.1–9.5: the ladder (C33) -------------------------------------------------------------------
void ladder(const Context& cx) {
    const LmSetup s = cx.setup("ladder");
    std::cout << "The ladder (Sections 9.1-9.5): each row adds one piece to the row above\n  " << setup_line(s) << "\n";
    const std::vector<LmRun> runs = run_ladder(cx.corpus, s);
    Table t(std::cout, {{"model", 26}, {"parameters", 12, 0}, {"held-out ppl", 14, 2}}, "  ");
    t.header();
    for (const LmRun& r : runs) t.row({r.name, r.params, r.heldout.perplexity});
    auto ppl = [&](std::size_t i) { return runs[i].heldout.perplexity; };
    enum { base, uniform, positions, residual, replacing, added, heads, ffn, layernorm };
    std::cout << "  The uniform average is " << fmt(ppl(uniform) / ppl(base), 1) << "x worse than no context; positions move it by "
              << fmt(ppl(uniform) - ppl(positions), 2) << "; with the residual it is " << fmt(ppl(residual), 2) << " against "
              << fmt(ppl(base), 2) << ".\n  Learned weights beat uniform ones by " << fmt(ppl(residual) - ppl(added), 2)
              << " points; the same head added rather than replacing is worth " << fmt(ppl(replacing) - ppl(added), 2) << ".\n";
    // Tolerances: "much worse" is 1.5x (the chapter: 4x); "barely" is within 10 %; "about the baseline" is
    // within 25 % (the chapter: +1.2 %; on the stories a bag of words knows which hero and home are in play).
    cx.claims.add("C33", "averaging is much worse than no context; positions do not fix it; the residual brings it back",
                  "uniform about 4x worse than the baseline; + positions 2.14 of 188 points; + residual 60.45 vs 59.71",
                  "uniform " + fmt(ppl(uniform) / ppl(base), 2) + "x the baseline; + positions " + vs(ppl(positions), ppl(uniform)) +
                      "; + residual " + vs(ppl(residual), ppl(base)),
                  agrees_if(ppl(uniform) > 1.5 * ppl(base) && std::fabs(ppl(positions) - ppl(uniform)) < 0.1 * ppl(uniform) &&
                      std::fabs(ppl(residual) / ppl(base) - 1) < 0.25));
    cx.claims.add("C33", "learned weights beat uniform ones; four heads beat one; a head added beats one replacing",
                  "14 points; 3 more points; 9 points", "head " + vs(ppl(added), ppl(residual)) + "; heads " + vs(ppl(heads), ppl(added)) +
                      "; added " + vs(ppl(added), ppl(replacing)),
                  agrees_if(ppl(added) < ppl(residual) && ppl(heads) < ppl(added) && ppl(added) < ppl(replacing)));
    cx.claims.add("C33", "the FFN helps, and LayerNorm helps on top of it", "both lower the perplexity (LayerNorm by 1.8 points)",
                  "FFN " + vs(ppl(ffn), ppl(heads)) + "; LayerNorm " + vs(ppl(layernorm), ppl(ffn)),
                  agrees_if(ppl(ffn) < ppl(heads) && ppl(layernorm) < ppl(ffn)));
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) curves.push_back(loss_curve(runs[i], i));
    svg::write_file(cx.svg, svg::line_plot(curves, {"The ladder: training loss (mean of 25 steps)", "step", "loss (nats per byte)"}));
    std::cout << "  wrote " << cx.svg << " (the training curves)\n\n";
}

// --- Section 9.2: the √d_k ablation (C12) ----------------------------------------------------------------
void scale(const Context& cx) {
    const LmSetup s = cx.setup("scale");
    const std::vector<std::size_t> widths = scale_widths(cx.size);
    std::cout << "Dropping the division by sqrt(d_k) (Section 9.2): one head of width d_k, LayerNorm before the projections\n  "
              << setup_line(s) << "\n";
    const std::vector<ScaleRun> runs = run_scale(cx.corpus, s, widths);
    Table t(std::cout, {{"d_k", 6, 0}, {"ppl / sqrt(d_k)", 17, 2}, {"ppl without", 13, 2}, {"cost", 8, 2}}, "  ");
    t.header();
    for (std::size_t i = 0; i + 1 < runs.size(); i += 2)
        t.row({runs[i].d_k, runs[i].run.heldout.perplexity, runs[i + 1].run.heldout.perplexity,
               runs[i + 1].run.heldout.perplexity - runs[i].run.heldout.perplexity});
    std::cout << "\n  The scores themselves (held-out windows; rows past the first, which has one position to attend to)\n";
    Table st(std::cout, {{"d_k", 6, 0}, {"", 10}, {"score std init", 16, 2}, {"at end", 9, 2}, {"entropy at end", 16, 3},
                         {"rows > 0.99", 13, 3}},
             "  ");
    st.header();
    for (const ScaleRun& r : runs)
        st.row({r.d_k, r.scaled ? "/ sqrt" : "without", r.init.score_std, r.end.score_std, r.end.entropy, r.end.one_hot});
    const ScaleRun &small_s = runs[0], &small_u = runs[1], &big_s = runs[runs.size() - 2], &big_u = runs.back();
    auto cost = [](const ScaleRun& with, const ScaleRun& without) {
        return without.run.heldout.perplexity / with.run.heldout.perplexity - 1;
    };
    const double c_small = cost(small_s, small_u), c_big = cost(big_s, big_u);
    std::cout << "  Without the division the perplexity is " << fmt(100 * c_small, 0) << " % higher at d_k = " << small_s.d_k << " and "
              << fmt(100 * c_big, 0) << " % higher at d_k = " << big_s.d_k << ".\n";
    cx.claims.add("C12", "without the division: little lost at small d_k, much at large; the unscaled scores run away",
                  "no loss at d_k = 32, 18 points at 256; std 21 -> 5147, 99.9 % of rows > 0.99; scaled std ~3.4",
                  "cost " + fmt(100 * c_small, 0) + " % at " + std::to_string(small_s.d_k) + " (std " + fmt(small_u.init.score_std, 1) +
                      " -> " + fmt(small_u.end.score_std, 1) + "), " + fmt(100 * c_big, 0) + " % at " +
                      std::to_string(big_s.d_k) + "; unscaled std " + fmt(big_u.init.score_std, 1) + " -> " +
                      fmt(big_u.end.score_std, 1) + ", rows > 0.99: " + fmt(100 * big_u.end.one_hot, 1) + " %; scaled std " +
                      fmt(big_s.end.score_std, 2),
                  agrees_if(c_big > 3 * c_small && c_big > 0.15 && big_u.end.score_std > big_u.init.score_std &&
                      big_u.end.one_hot > 0.5 && big_s.end.one_hot < 0.05 && big_s.end.score_std < 0.5 * big_u.end.score_std &&
                      small_u.end.score_std < small_u.init.score_std));
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        svg::Series c = loss_curve(runs[i].run, i / 2 + 1, !runs[i].scaled);
        curves.push_back(c);
    }
    svg::write_file(cx.svg, svg::line_plot(curves, {"Training loss with (solid) and without (dashed) the division by sqrt(d_k)",
                                                    "step", "loss (nats per byte)"}));
    std::cout << "  wrote " << cx.svg << " (the training curves)\n\n";
}

// --- Section 9.5: pre-norm and post-norm, with and without warmup (C24) ----------------------------------
void norm(const Context& cx) {
    const LmSetup s = cx.setup("norm");
    const WarmupSetup ws = warmup_setup(cx.size);
    const bool quick = cx.size == LmSize::quick;
    std::cout << "Pre-norm and post-norm (Section 9.5): " << ws.n_layers << " blocks, " << s.n_heads << " heads, PyTorch's initialisation\n  "
              << setup_line(s) << "\n  (Post-norm's trouble without warmup grows with lr x width: Adam moves each weight by about lr\n"
              << "  a step, and a unit sums width of them. The chapter's lr 3e-3 at width 128 is lr x width = 0.38.)\n\n";
    const std::vector<WarmupRun> runs = run_warmup(cx.corpus, s, ws);
    for (const WarmupRun& r : runs) {
        std::string label = r.run.name;
        label.resize(30, ' ');
        std::cout << "  " << label << "perplexity " << fmt(r.run.heldout.perplexity, 2) << "\n";
    }
    const WarmupVerdict verdict = warmup_verdict(runs, quick ? WarmupCriterion::rescue_only : WarmupCriterion::as_stated);
    std::cout << "  Post-norm without warmup is " << fmt(verdict.post / verdict.pre, 1) << "x pre-norm's perplexity; with warmup "
              << fmt(verdict.post_warmup / verdict.pre, 2) << "x.\n";
    add_claim(cx.claims, verdict);
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) curves.push_back(loss_curve(runs[i].run, i < 2 ? 8 : 1, runs[i].warmup > 0));
    svg::write_file(cx.svg, svg::line_plot(curves, {std::to_string(ws.n_layers) + " blocks: pre-norm (blue) and post-norm (red), warmup dashed",
                                                    "step", "loss (nats per byte)"}));
    std::cout << "  wrote " << cx.svg << " (the training curves)\n\n";
}

// --- Section 9.6: positions, trained on one window and evaluated on longer ones (C29) ---------------------
void positions(const Context& cx) {
    const LmSetup s = cx.setup("positions");
    std::cout << "Four ways to put positions in (Section 9.6): trained on " << s.T << "-token windows, evaluated at 1x, 2x, 4x\n  "
              << setup_line(s) << "\n  (each model: the full block of the ladder; the learned table has " << 4 * s.T
              << " rows, those past " << s.T << " never trained)\n";
    const std::vector<PositionRun> runs = run_positions(cx.corpus, s);
    std::vector<Column> cols = {{"positions", 12}};
    for (std::size_t L : runs.front().lengths) cols.push_back({"ppl at " + std::to_string(L), 12, 2});
    Table t(std::cout, cols, "  ");
    t.header();
    for (const PositionRun& r : runs) {
        std::vector<Cell> row = {r.run.name};
        for (const Evaluation& e : r.at) row.push_back(e.perplexity);
        t.row(row);
    }
    auto at = [&](std::size_t kind, std::size_t m) { return runs[kind].at[m].perplexity; };
    enum { learned, sinusoidal, rope, alibi };
    const bool learned_best = at(learned, 0) <= 1.02 * std::min({at(sinusoidal, 0), at(rope, 0), at(alibi, 0)});
    const bool learned_collapses = at(learned, 2) > 2 * at(learned, 0);
    const bool sin_fails = at(sinusoidal, 2) > 1.5 * at(sinusoidal, 0);
    const bool rope_graceful = at(rope, 1) < std::min(at(learned, 1), at(sinusoidal, 1)) && at(rope, 2) < std::min(at(learned, 2), at(sinusoidal, 2));
    // --quick trains on 32-token windows for 600 steps: too little for ALiBi to use context at 4x (its
    // perplexity there stays within 5 %); at the default size it improves at 2x and 4x.
    const bool quick = cx.size == LmSize::quick;
    const bool alibi_improves = at(alibi, 1) <= at(alibi, 0) && at(alibi, 2) <= (quick ? 1.05 : 1.0) * at(alibi, 0);
    std::cout << "  Learned positions at 4x: " << fmt(at(learned, 2) / at(learned, 0), 1) << "x their perplexity at 1x; sinusoidal "
              << fmt(at(sinusoidal, 2) / at(sinusoidal, 0), 1) << "x; RoPE " << fmt(at(rope, 2) / at(rope, 0), 2) << "x; ALiBi "
              << fmt(at(alibi, 2) / at(alibi, 0), 2) << "x.\n";
    cx.claims.add("C29", "past the training window: learned collapses, sinusoids fail, RoPE degrades gracefully, ALiBi improves",
                  "learned best at 64 then collapses; sinusoids do not extrapolate; RoPE degrades; ALiBi 44.95 -> 42.49",
                  std::string("learned ") + fmt(at(learned, 0), 2) + " -> " + fmt(at(learned, 2), 2) + ", sinusoidal " +
                      fmt(at(sinusoidal, 0), 2) + " -> " + fmt(at(sinusoidal, 2), 2) + ", RoPE " + fmt(at(rope, 0), 2) + " -> " +
                      fmt(at(rope, 2), 2) + ", ALiBi " + fmt(at(alibi, 0), 2) + " -> " + fmt(at(alibi, 2), 2) +
                      (learned_best ? "" : " (learned not best at 1x)") + (quick ? " (--quick: ALiBi at 4x within 5 %)" : ""),
                  agrees_if(learned_collapses && sin_fails && rope_graceful && alibi_improves));
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        svg::Series c{runs[i].run.name, {}, {}, kColours[(2 * i + 1) % 9]};
        for (std::size_t m = 0; m < runs[i].at.size(); ++m)
            c.x.push_back(static_cast<double>(runs[i].lengths[m])), c.y.push_back(runs[i].at[m].perplexity);
        curves.push_back(c);
    }
    svg::write_file(cx.svg, svg::line_plot(curves, {"Held-out perplexity against evaluation window (trained on " + std::to_string(s.T) + ")",
                                                    "tokens in the window", "perplexity", true}));
    std::cout << "  wrote " << cx.svg << " (perplexity against window)\n\n";
}

// --- Section 9.8: one block and two, on data seen many times (C37) -----------------------------------------
void depth(const Context& cx) {
    const LmSetup s = cx.setup("depth");
    const std::size_t tokens = depth_train_tokens(cx.size);
    std::cout << "One block against two (Section 9.8): GPT-2-shaped pre-norm blocks, trained on the first " << fmt_count(static_cast<long long>(tokens))
              << " training tokens\n  " << setup_line(s) << "\n  (each token is seen about "
              << fmt(static_cast<double>(s.steps) * static_cast<double>(s.batch * s.T) / static_cast<double>(tokens), 0) << " times)\n";
    const std::vector<DepthRun> runs = run_depth(cx.corpus, s, tokens);
    Table t(std::cout, {{"model", 12}, {"parameters", 12, 0}, {"train ppl", 11, 2}, {"held-out ppl", 14, 2}}, "  ");
    t.header();
    for (const DepthRun& r : runs) t.row({r.run.name, r.run.params, r.train.perplexity, r.run.heldout.perplexity});
    const DepthRun &one = runs[0], &two = runs[1];
    cx.claims.add("C37", "two blocks fit the training data better and held-out data worse than one",
                  "train 14.49 vs 18.77, held-out 40.57 vs 38.07",
                  "train " + vs(two.train.perplexity, one.train.perplexity) + ", held-out " +
                      vs(two.run.heldout.perplexity, one.run.heldout.perplexity),
                  agrees_if(two.train.perplexity < one.train.perplexity && two.run.heldout.perplexity > one.run.heldout.perplexity));
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        curves.push_back(loss_curve(runs[i].run, i == 0 ? 8 : 1));
        svg::Series h{runs[i].run.name + ", held-out", {}, {}, kColours[i == 0 ? 8 : 1], true};
        for (const auto& [step, loss] : runs[i].run.log.evals) h.x.push_back(step), h.y.push_back(loss);
        curves.push_back(h);
    }
    svg::write_file(cx.svg, svg::line_plot(curves, {"Training loss (solid) and held-out loss (dashed)", "step", "loss (nats per byte)"}));
    std::cout << "  wrote " << cx.svg << " (training and held-out loss)\n\n";
}

void bench(const Context& cx, int threads) {
    LmSetup s = cx.setup("ladder");
    const int steps = cx.steps > 0 ? cx.steps : 20;
    const double rate = ladder_block_tokens_per_s(cx.corpus.vocab_size(), s, steps, threads);
    std::cout << "Training throughput of the ladder's full block: width " << s.d_model << ", context " << s.T << ", batch " << s.batch
              << ", " << s.n_heads << " heads, d_ff " << 4 * s.d_model << ", vocabulary " << cx.corpus.vocab_size() << "\n";
    std::cout << "  attn (C++), " << threads << " thread" << (threads > 1 ? "s" : "") << ", " << steps
              << " steps: tokens/s " << fmt(rate, 0) << "\n";
    std::cout << "  (tools/lm_throughput.sh runs this beside the same model in PyTorch)\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::string command = "all";
    std::uint64_t seed = 0;
    int steps = 0, threads = 1;
    bool quick = false, full = false, mine = false;
    std::string corpus_path, svg_path = "12_language_model.svg";
    Cli cli("12_language_model",
            "Sections 9.1-9.8 experiments (003): the ladder, the sqrt(d_k) ablation, warmup, position extrapolation, depth");
    cli.add_choice("experiment", command, {"ladder", "scale", "norm", "positions", "depth", "all", "bench"},
                   "which experiment to run, before or after the flags (default all)");
    cli.add("--corpus", corpus_path, "train on this UTF-8 text file instead of the generated stories (1 MB, always the same text)");
    cli.add("--seed", seed, "random seed (initialisation and batches)");
    cli.add_switch("--quick", quick, "a test's size: seconds per experiment, the shape of each result only");
    cli.add_switch("--full", full, "the chapter's size (width 128, context 128, 3000 steps, batch 64; d_k up to 1024): hours");
    cli.add("--steps", steps, "training steps for every model (0: each experiment's own); --full's 3000 take hours", 0, 100'000);
    cli.add("--threads", threads, "bench: BLAS threads; more than the cores only contend", 1, 256);
    cli.add("--svg", svg_path, "the picture of the experiment (with all: the ladder's; the others beside it, FILE_scale.svg, ...)");
    cli.add_switch("--mine", mine, "also run your exercises 9.1-9.3 (the position tables these models use) beside the reference");
    cli.footer("experiments: 12_language_model [ladder|scale|norm|positions|depth|all|bench] [flags] (default: all,\n"
               "every experiment but bench, in the chapter's order)");

    return run_program(cli, argc, argv, [&] {
        require(!(quick && full), "12_language_model", "--quick and --full choose different sizes: give one");
        const LmSize size = quick ? LmSize::quick : full ? LmSize::full : LmSize::standard;
        std::cout << cli.title() << "\n\n";
        const Corpus corpus = corpus_path.empty() ? make_corpus(generate_stories(0, 1'000'000), "generated stories (seed 0)")
                                                  : load_corpus(corpus_path);
        std::cout << "Corpus: " << corpus.source << ", " << fmt_count(static_cast<long long>(corpus.bytes)) << " bytes; "
                  << corpus.vocab_size() << " distinct bytes are the vocabulary; " << fmt_count(static_cast<long long>(corpus.train.size()))
                  << " tokens train, " << fmt_count(static_cast<long long>(corpus.heldout.size())) << " are held out\n"
                  << "Size: " << (quick ? "--quick (the shape of each result, in seconds)" : full ? "--full (the chapter's)" : "default")
                  << "; the perplexities are per byte, not per BPE token as in the chapter, so smaller\n\n";
        ClaimReport claims;
        if (command == "bench") {
            bench(Context{corpus, size, seed, steps, svg_path, claims}, threads);
            return;
        }
        const std::map<std::string, void (*)(const Context&)> experiments = {
            {"ladder", ladder}, {"scale", scale}, {"norm", norm}, {"positions", positions}, {"depth", depth}};
        bool first = true;
        for (const std::string& name : lm_experiment_names()) {
            if (command != "all" && command != name) continue;
            const std::string svg = first ? svg_path : svg::sibling(svg_path, "_" + name);
            first = false;
            const auto start = std::chrono::steady_clock::now();
            experiments.at(name)(Context{corpus, size, seed, steps, svg, claims});
            std::cerr << "  [" << name << ": " << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1)
                      << " s]\n";
        }
        if (mine) {
            const std::size_t T = 8, d = 16;
            std::cout << "Your exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 9.1 sinusoidal_table(8, 16), the table sinusoidal models add",
                         [&] { return ex::sinusoidal_table(T, d); }, sinusoidal_table(T, d), 1e-5);
            Mat unit = xt::zeros<float>({T, d});
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < d; j += 2) unit(t, j) = 1.0f;
            compare_mine(std::cout, "exercise 9.2 rope_rotate of (1, 0) pairs, the angles RoPE models read",
                         [&] { return ex::rope_rotate(unit, 0); }, rope(unit), 1e-4);
            compare_mine(std::cout, "exercise 9.3 alibi_bias(8, 4 heads, head 1), the bias of an ALiBi model's first head",
                         [&] { return ex::alibi_bias(T, 4, 1); }, alibi_bias(T, alibi_slopes(4).front()), 1e-6);
        }
        claims.print(std::cout);
    });
}
