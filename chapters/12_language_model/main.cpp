// Sections 9.1–9.8, the chapter's trained language models: the ladder from averaging to a full
// block, the √d_k ablation, post-norm's need for warmup, how four position schemes extrapolate, and one
// block against two.
//
//   12_language_model [ladder|scale|norm|positions|depth|all|bench] [flags]
//
// Each experiment trains small causal language models on a corpus — by default the chapter's, tiny
// Shakespeare (data/), or the generated stories (--corpus stories) or any UTF-8 text (--corpus FILE) — and
// reports held-out perplexity, exp of the mean next-token cross-entropy on the last 10 % of the text. A
// token is a byte (--tokenizer bytes) or, as in the chapter, a byte-level BPE token (--tokenizer bpe --vocab
// 1024, GPT-2's cut into words, the merges learned on the training 90 % only; --full's default). The models and the training loop are the library's (attn/model.hpp,
// train.hpp); the experiments are beside this file (sizes.hpp lists them), the norm experiment
// 08_normalization's (chapters/08_normalization/warmup.hpp). This file prints the chapter's tables from
// their results, a sample of what each rung of the ladder writes, and checks each claim as the chapter
// states it (agrees), or only in a named weaker form (shape), or not (differs).
// `bench` is not part of `all`: it times training (tokens/s), which varies run to run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <string>

#include "09_positions/positions.hpp"
#include "attn/claims.hpp"
#include "attn/cli.hpp"
#include "attn/mine.hpp"
#include "attn/positions.hpp"
#include "attn/sample.hpp"
#include "attn/svg.hpp"
#include "attn/table.hpp"
#include "chapters/08_normalization/warmup.hpp"
#include "chapters/12_language_model/depth.hpp"
#include "chapters/12_language_model/ladder.hpp"
#include "chapters/12_language_model/position_extrapolation.hpp"
#include "chapters/12_language_model/scale_ablation.hpp"
#include "chapters/12_language_model/sizes.hpp"

using namespace attn;
using namespace attn::sec12;  // this section's experiments (chapters/12_language_model/)
using namespace attn::sec08;  // the warmup experiment, which Section 9.5's stack shares (chapters/08_normalization/)

namespace {

const char* const kColours[] = {"#7f7f7f", "#d62728", "#ff7f0e", "#bcbd22", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#1f77b4"};
const std::size_t kSmooth = 25;  // plot the mean of each 25 training losses: one batch's loss is noisy

svg::Series loss_curve(const LmRun& run, std::size_t i, bool dashed = false) {
    return attn::loss_curve(run.name, run.log.losses, kSmooth, kColours[i % 9], dashed);
}

// The held-out windows evaluate() scores: eval_windows, or as many as the held-out tokens hold.
std::size_t heldout_windows(const Corpus& corpus, const LmSetup& s) {
    return std::min(s.eval_windows, (corpus.heldout.size() - 1) / s.T);
}

std::string setup_line(const LmSetup& s, const Corpus& corpus) {
    return "width " + std::to_string(s.d_model) + ", context " + std::to_string(s.T) + ", " + std::to_string(s.steps) +
           " steps of AdamW at " + fmt_sci(s.lr, 0) + ", batch " + std::to_string(s.batch) +
           (s.clip > 0 ? ", gradient clipping at " + fmt(s.clip, 1) : ", no gradient clipping") + "; perplexity on " +
           std::to_string(heldout_windows(corpus, s)) + " held-out windows";
}

// "6.81 vs 13.44"
std::string vs(double a, double b) { return fmt(a, 2) + " vs " + fmt(b, 2); }

// An experiment's results at --seed (already run: `first`) and at the other seeds of --seeds.
template <class R, class Run>
std::vector<R> at_other_seeds(R first, const std::vector<std::uint64_t>& seeds, const char* what, Run run) {
    std::vector<R> all = {std::move(first)};
    for (std::size_t k = 1; k < seeds.size(); ++k) {
        std::cerr << "  " << what << " at seed " << seeds[k] << " (" << k + 1 << " of " << seeds.size() << ")\n";
        all.push_back(run(seeds[k]));
    }
    return all;
}

// "(bytes, width 32, …)": the setup a trained claim's line names
std::string claim_setup(const LmSetup& s, const Corpus& corpus) {
    return "(" + corpus.source + ", " + std::string(corpus.tokenizer == Tokenizer::bpe ? "BPE" : "bytes") + ", " + setup_line(s, corpus) + ")";
}

struct Context {
    const Corpus& corpus;
    LmSize size;
    std::uint64_t seed;
    int n_seeds;  // --seeds: the trained claims are decided over seeds seed, seed + 1, …
    int steps;  // 0: each experiment's own
    std::string svg;
    ClaimReport& claims;
    Checkpoints checkpoints;  // --save, --every, --resume
    Device device = Device::cpu;  // --device
    Engine engine = Engine::fast;  // --engine
    std::string loss_axis() const { return std::string("loss (nats per ") + corpus.unit() + ")"; }
    std::vector<std::uint64_t> seeds() const {
        std::vector<std::uint64_t> all;
        for (int i = 0; i < n_seeds; ++i) all.push_back(seed + static_cast<std::uint64_t>(i));
        return all;
    }
    LmSetup setup(const std::string& experiment) const {
        LmSetup s = lm_setup(experiment, size);
        s.seed = seed;
        if (steps > 0) s.steps = steps;
        s.checkpoints = checkpoints;
        s.device = device;
        s.engine = engine;
        return s;
    }
};

// --- Sections 9.1–9.5: the ladder (C33, and C14 inside it) --------------------------------------------
void ladder(const Context& cx) {
    const LmSetup s = cx.setup("ladder");
    std::cout << "The ladder (Sections 9.1-9.5): each row adds one piece to the row above\n  " << setup_line(s, cx.corpus) << "\n";
    const SampleSetup samples;
    const std::vector<LadderRun> rungs = run_ladder(cx.corpus, s, samples);
    Table t(std::cout, {{"model", 26}, {"parameters", 12, 0}, {"held-out ppl", 14, 2}}, "  ");
    t.header();
    for (const LadderRun& r : rungs) t.row({r.run.name, r.run.params, r.run.heldout.perplexity});
    auto ppl = [&](std::size_t i) { return rungs[i].run.heldout.perplexity; };
    enum { base, uniform, positions, residual, replacing, added, heads, ffn, layernorm };
    const double ratio = ppl(uniform) / ppl(base);
    std::cout << "  The uniform average's perplexity is " << fmt(ratio, 1) << "x that of no context; positions move it by "
              << fmt(ppl(uniform) - ppl(positions), 2) << "; with the residual it is " << fmt(ppl(residual), 2) << " against "
              << fmt(ppl(base), 2) << ".\n  At seed " << s.seed << ", learned weights beat uniform ones by " << fmt(ppl(residual) - ppl(added), 2)
              << " points; the same head added rather than replacing is worth " << fmt(ppl(replacing) - ppl(added), 2) << ".\n";
    const std::size_t d = s.d_model, extra = rungs[heads].run.params - rungs[added].run.params;
    std::cout << "  " << s.n_heads << " heads add W_o and b_o to the one head: " << fmt_count(static_cast<long long>(extra))
              << " more parameters (d_model^2 + d_model = " << fmt_count(static_cast<long long>(d * d + d)) << " at d_model = " << d
              << "), for " << fmt(ppl(added) - ppl(heads), 2) << " points of perplexity.\n";
    // The same ladder at the other seeds: each claim below is decided over all of them (claims.hpp's judge).
    std::vector<std::vector<double>> by_seed = {{}};  // by_seed[seed][rung]: held-out perplexity
    for (std::size_t i = 0; i < rungs.size(); ++i) by_seed[0].push_back(ppl(i));
    const std::vector<std::uint64_t> seeds = cx.seeds();
    for (std::size_t k = 1; k < seeds.size(); ++k) {
        LmSetup other = s;
        other.seed = seeds[k];
        std::cerr << "  the ladder at seed " << seeds[k] << " (" << k + 1 << " of " << seeds.size() << ")\n";
        std::vector<double> p;
        for (const LadderRun& r : run_ladder(cx.corpus, other, samples)) p.push_back(r.run.heldout.perplexity);
        by_seed.push_back(p);
    }
    if (seeds.size() > 1) {
        std::cout << "  Held-out perplexity at each seed:\n";
        std::vector<Column> cols = {{"model", 26}};
        for (std::uint64_t sd : seeds) cols.push_back({"seed " + std::to_string(sd), 9, 2});
        Table ts(std::cout, cols, "  ");
        ts.header();
        for (std::size_t i = 0; i < rungs.size(); ++i) {
            std::vector<Cell> row = {rungs[i].run.name};
            for (const auto& p : by_seed) row.push_back(p[i]);
            ts.row(row);
        }
    }
    // figure(f): f(perplexities of one seed) at every seed
    const auto figure = [&](std::string name, auto f, double chapter = kNoSize) { return figure_over(by_seed, std::move(name), f, chapter); };
    // "by how much b beats a": a's perplexity less b's, in % of a's (the chapter's points over its loser's perplexity)
    const auto gain = [](double a, double b) { return 100.0 * (a - b) / a; };
    const std::string setup = claim_setup(s, cx.corpus);
    // "Much worse" is the chapter's 4x: the uniform model's perplexity over the baseline's, less 1, is about 3
    // (300 %). "Barely helps": positions move it by less than 10 % (the chapter: 2.14 points of 188, 1.1 %);
    // "about the baseline": within 5 % (the chapter: 60.45 against 59.71). The weaker statement: worse by half
    // at least, positions under 10 %, the residual within 25 %.
    cx.claims.add("C33", "averaging is much worse than no context; positions do not fix it; the residual brings it back " + setup,
                  "uniform about 4x worse than the baseline; + positions 2.14 of 188 points; + residual 60.45 vs 59.71",
                  OverSeeds{.seeds = seeds,
                            .as_stated = {figure("uniform / no-context perplexity - 1", [&](const auto& p) { return 100.0 * (p[uniform] / p[base] - 1); }, 300.0),
                                          figure("10 % - what positions move it", [&](const auto& p) { return 10.0 - 100.0 * std::fabs(p[positions] - p[uniform]) / p[uniform]; }),
                                          figure("5 % - the residual's distance from no context", [&](const auto& p) { return 5.0 - 100.0 * std::fabs(p[residual] / p[base] - 1); })},
                            .weaker_name = "the uniform average is worse than no context by half at least, positions move it less than 10 %, "
                                           "the residual comes back within 25 % of the baseline",
                            .weaker = {figure("uniform / no-context perplexity - 1.5", [&](const auto& p) { return 100.0 * (p[uniform] / p[base] - 1.5); }),
                                       figure("10 % - what positions move it", [&](const auto& p) { return 10.0 - 100.0 * std::fabs(p[positions] - p[uniform]) / p[uniform]; }),
                                       figure("25 % - the residual's distance from no context", [&](const auto& p) { return 25.0 - 100.0 * std::fabs(p[residual] / p[base] - 1); })}});
    // The chapter's points, over the loser's perplexity: learned beats uniform by 14 of 60.45 (23.2 %), four heads
    // beat one by 3 of 46.45 (6.5 %), the head added beats the head replacing by 9 of 55.45 (16.2 %).
    cx.claims.add("C33", "learned weights beat uniform ones; four heads beat one; a head added beats one replacing " + setup,
                  "14 points (23 % of 60.45); 3 more points (6.5 %); 9 points (16 %)",
                  OverSeeds{.seeds = seeds,
                            .as_stated = {figure("learned head's gain over uniform", [&](const auto& p) { return gain(p[residual], p[added]); }, 100.0 * 14 / 60.45),
                                          figure("heads' gain over one", [&](const auto& p) { return gain(p[added], p[heads]); }, 100.0 * 3 / 46.45),
                                          figure("added head's gain over replacing", [&](const auto& p) { return gain(p[replacing], p[added]); }, 100.0 * 9 / 55.45)}});
    cx.claims.add("C33", "the FFN helps, and LayerNorm helps on top of it " + setup, "both lower the perplexity (LayerNorm by 1.8 points)",
                  OverSeeds{.seeds = seeds,
                            .as_stated = {figure("FFN's gain", [&](const auto& p) { return gain(p[heads], p[ffn]); }),
                                          figure("LayerNorm's gain", [&](const auto& p) { return gain(p[ffn], p[layernorm]); })}});
    cx.claims.add("C14", "several heads, mixed by W_o, beat one head without it, for d_model^2 + d_model more parameters " + setup,
                  "four heads buy 3 points (6.5 %) with 16,512 extra parameters (d_model 128)",
                  OverSeeds{.seeds = seeds,
                            .as_stated = {figure(std::to_string(s.n_heads) + " heads' gain over one, for " + fmt_count(static_cast<long long>(extra)) +
                                                     " extra parameters (d_model^2 + d_model " + (extra == d * d + d ? "exactly" : "NOT") + ")",
                                                 [&](const auto& p) { return extra == d * d + d ? gain(p[added], p[heads]) : -1.0; }, 100.0 * 3 / 46.45)}});
    std::cout << "\n  What each rung writes: " << samples.characters << " characters at temperature " << fmt(samples.temperature, 0)
              << ", seed " << cx.seed << ", after the held-out text's first characters \"" << printable(rungs.front().prompt)
              << "\"\n  (a newline shows as \\n)\n";
    for (const LadderRun& r : rungs) std::cout << "  " << r.run.name << ":\n    " << printable(r.sample) << "\n";
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < rungs.size(); ++i) curves.push_back(loss_curve(rungs[i].run, i));
    svg::write_file(cx.svg, svg::line_plot(curves, {"The ladder: training loss (mean of 25 steps)", "step", cx.loss_axis()}));
    std::cout << "  wrote " << cx.svg << " (the training curves)\n\n";
}

// --- Section 9.2: the √d_k ablation (C12) ----------------------------------------------------------------
void scale(const Context& cx) {
    const LmSetup ls = cx.setup("ladder"), s = cx.setup("scale");
    const std::vector<std::size_t> widths = scale_widths(cx.size);
    std::cout << "Dropping the division by sqrt(d_k) (Section 9.2), in the chapter's two settings\n"
              << "  the small d_k: the ladder's " << ls.n_heads << "-head rung, " << setup_line(ls, cx.corpus) << "\n"
              << "  the large d_k: one head, no normalisation before the projections, " << setup_line(s, cx.corpus) << "\n";
    if (cx.device == Device::gpu) std::cout << "  (on the CPU: this experiment reads the models' attention weights)\n";
    const std::vector<ScaleRun> runs = run_scale(cx.corpus, ls, s, widths);
    Table t(std::cout, {{"d_k", 6, 0}, {"heads", 7, 0}, {"ppl / sqrt(d_k)", 17, 2}, {"ppl without", 13, 2}, {"cost", 8, 2}}, "  ");
    t.header();
    for (std::size_t i = 0; i + 1 < runs.size(); i += 2)
        t.row({runs[i].d_k, runs[i].n_heads, runs[i].run.heldout.perplexity, runs[i + 1].run.heldout.perplexity,
               runs[i + 1].run.heldout.perplexity - runs[i].run.heldout.perplexity});
    std::cout << "\n  The scores themselves (held-out windows; rows past the first, which has one position to attend to)\n";
    Table st(std::cout, {{"d_k", 6, 0}, {"", 10}, {"score std init", 16, 2}, {"at end", 9, 2}, {"entropy at end", 16, 3},
                         {"rows > 0.99", 13, 3}},
             "  ");
    st.header();
    for (const ScaleRun& r : runs)
        st.row({r.d_k, r.scaled ? "/ sqrt" : "without", r.init.score_std, r.end.score_std, r.end.entropy, r.end.one_hot});
    // The figures of one seed's runs: the cost of dropping the division at the small d_k and the least at the
    // large ones, and how the unscaled large heads end (the first large width, 256, for std and entropy).
    struct ScaleFigures {
        double c_small, c_large_min, one_hot_min, std_growth, entropy, soft;
        std::string costs;
    };
    const auto figures = [](const std::vector<ScaleRun>& r) {
        auto cost = [&](std::size_t row) { return r[2 * row + 1].run.heldout.perplexity / r[2 * row].run.heldout.perplexity - 1; };
        ScaleFigures f{.c_small = cost(0), .c_large_min = cost(1), .one_hot_min = r[3].end.one_hot, .std_growth = 1e300,
                       .entropy = r[3].end.entropy, .soft = 0.5 * r[3].end.score_std - r[2].end.score_std, .costs = ""};
        for (std::size_t row = 1; 2 * row < r.size(); ++row) {
            const ScaleRun& u = r[2 * row + 1];
            f.c_large_min = std::min(f.c_large_min, cost(row)), f.one_hot_min = std::min(f.one_hot_min, u.end.one_hot);
            f.std_growth = std::min(f.std_growth, u.end.score_std / u.init.score_std - 1);
            f.costs += (row > 1 ? ", " : "") + fmt(100 * cost(row), 0) + " % at " + std::to_string(u.d_k);
        }
        return f;
    };
    const ScaleFigures first = figures(runs);
    const ScaleRun &small_u = runs[1], &big_s = runs[2], &big_u = runs[3];  // big: the first large width, 256
    std::cout << "  Without the division the perplexity is " << fmt(100 * first.c_small, 1) << " % higher at d_k = " << runs[0].d_k << " ("
              << runs[0].n_heads << " heads) and " << first.costs << " (one head).\n";
    std::cout << "  The unscaled d_k = " << big_u.d_k << " head: score std " << fmt(big_u.init.score_std, 1) << " -> " << fmt(big_u.end.score_std, 1)
              << ", entropy " << fmt(big_u.end.entropy, 3) << ", rows > 0.99: " << fmt(100 * big_u.end.one_hot, 1) << " %; the scaled one's std "
              << fmt(big_s.end.score_std, 2) << "; at d_k = " << runs[0].d_k << " the unscaled std " << fmt(small_u.init.score_std, 1) << " -> "
              << fmt(small_u.end.score_std, 1) << ".\n";
    const std::vector<ScaleFigures> per_seed = at_other_seeds(first, cx.seeds(), "the sqrt(d_k) ablation", [&](std::uint64_t seed) {
        LmSetup ls2 = ls, s2 = s;
        ls2.seed = seed, s2.seed = seed;
        return figures(run_scale(cx.corpus, ls2, s2, widths));
    });
    // As stated: nothing lost at the small d_k (a cost under 5 %: "nothing" within the cost's spread over seeds,
    // 2.5 points at --quick), at least 15 % lost at every large one, and the unscaled heads run away: their score
    // std grows, entropy near 0 (under 0.1), at least 99 % of rows one-hot (the chapter: 99.9 %), while the scaled
    // head stays soft (its std under half the unscaled one's; the chapter: 3.44 against 5147). The weaker
    // statement: the cost grows with the width (more at every large d_k than at the small one, and over 15 %),
    // and the unscaled large heads run away (std grows, most rows one-hot) while the scaled stays soft.
    using F = ScaleFigures;
    const SeedFigure large = figure_over(per_seed, "least cost at a large d_k - 15 %", [](const F& f) { return 100 * (f.c_large_min - 0.15); });
    const SeedFigure grows = figure_over(per_seed, "unscaled std at the end / at init - 1 (least over the large d_k)", [](const F& f) { return f.std_growth; },
                                         kNoSize, "", 2);
    const SeedFigure soft = figure_over(per_seed, "half the unscaled std - the scaled std", [](const F& f) { return f.soft; },
                                        kNoSize, "", 2);
    cx.claims.add("C12", "without the division: nothing lost at small d_k, much at large; the unscaled scores run away " + claim_setup(s, cx.corpus),
                  "no loss at d_k = 32, 18 points at 256; std 21 -> 5147, 99.9 % of rows > 0.99; scaled std ~3.4",
                  OverSeeds{.seeds = cx.seeds(),
                            .as_stated = {figure_over(per_seed, "5 % - cost at the small d_k", [](const F& f) { return 100 * (0.05 - f.c_small); }), large, grows,
                                          figure_over(per_seed, "0.1 - unscaled entropy", [](const F& f) { return 0.1 - f.entropy; },
                                                      kNoSize, "", 3),
                                          figure_over(per_seed, "one-hot rows - 99 %", [](const F& f) { return 100 * (f.one_hot_min - 0.99); }), soft},
                            .weaker_name = "the cost grows with the width (more at every large d_k than at the small one, and over 15 %), the unscaled "
                                           "large heads run away (std grows, most rows one-hot) while the scaled stays soft",
                            .weaker = {figure_over(per_seed, "least large cost - small cost", [](const F& f) { return 100 * (f.c_large_min - f.c_small); }), large,
                                       grows, figure_over(per_seed, "one-hot rows - 50 %", [](const F& f) { return 100 * (f.one_hot_min - 0.5); }), soft}});
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        svg::Series curve = loss_curve(runs[i].run, i / 2 + 1, !runs[i].scaled);
        curves.push_back(curve);
    }
    svg::write_file(cx.svg, svg::line_plot(curves, {"Training loss with (solid) and without (dashed) the division by sqrt(d_k)",
                                                    "step", cx.loss_axis()}));
    std::cout << "  wrote " << cx.svg << " (the training curves)\n\n";
}

// --- Section 9.5: pre-norm and post-norm, with and without warmup (C24) ----------------------------------
void norm(const Context& cx) {
    const LmSetup s = cx.setup("norm");
    const WarmupSetup ws = warmup_setup(cx.size);
    const bool quick = cx.size == LmSize::quick;
    std::cout << "Pre-norm and post-norm (Section 9.5): " << ws.n_layers << " blocks, " << s.n_heads << " heads, PyTorch's initialisation\n  "
              << setup_line(s, cx.corpus) << "\n  (Post-norm's trouble without warmup grows with lr x width: Adam moves each weight by about lr\n"
              << "  a step, and a unit sums width of them. The chapter's lr 3e-3 at width 128 is lr x width = 0.38.)\n\n";
    if (cx.device == Device::gpu) std::cout << "  (on the CPU: Section 9.5's experiment trains 08_normalization's models)\n\n";
    const std::vector<WarmupRun> runs = run_warmup(cx.corpus, s, ws);
    for (const WarmupRun& r : runs) {
        std::string label = r.run.name;
        label.resize(30, ' ');
        std::cout << "  " << label << "perplexity " << fmt(r.run.heldout.perplexity, 2) << "\n";
    }
    const WarmupVerdict verdict = warmup_verdict(runs, quick ? WarmupCriterion::rescue_only : WarmupCriterion::as_stated);
    std::cout << "  Post-norm without warmup is " << fmt(verdict.post / verdict.pre, 1) << "x pre-norm's perplexity; with warmup "
              << fmt(verdict.post_warmup / verdict.pre, 2) << "x.\n";
    const std::vector<WarmupVerdict> per_seed = at_other_seeds(verdict, cx.seeds(), "pre-norm and post-norm", [&](std::uint64_t seed) {
        LmSetup o = s;
        o.seed = seed;
        return warmup_verdict(run_warmup(cx.corpus, o, ws), verdict.criterion);
    });
    if (per_seed.size() > 1) {
        std::cout << "  Held-out perplexity at each seed:\n";
        Table ts(std::cout, {{"seed", 6, 0}, {"pre-norm", 10, 2}, {"+ warmup", 10, 2}, {"post-norm", 11, 2}, {"+ warmup", 10, 2}}, "  ");
        ts.header();
        for (std::size_t k = 0; k < per_seed.size(); ++k)
            ts.row({cx.seeds()[k], per_seed[k].pre, per_seed[k].pre_warmup, per_seed[k].post, per_seed[k].post_warmup});
    }
    cx.claims.add("C24", "post-norm without warmup is several times worse; with warmup it matches pre-norm; pre-norm needs none " +
                             claim_setup(s, cx.corpus) + ", " + std::to_string(ws.n_layers) + " blocks",
                  "308.05 vs 37.82 (8x); 37.88 with warmup; pre-norm 37.62 with warmup", warmup_over_seeds(per_seed, cx.seeds()));
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) curves.push_back(loss_curve(runs[i].run, i < 2 ? 8 : 1, runs[i].warmup > 0));
    svg::write_file(cx.svg, svg::line_plot(curves, {std::to_string(ws.n_layers) + " blocks: pre-norm (blue) and post-norm (red), warmup dashed",
                                                    "step", cx.loss_axis()}));
    std::cout << "  wrote " << cx.svg << " (the training curves)\n\n";
}

// --- Section 9.6: positions, trained on one window and evaluated on longer ones (C29) ---------------------
void positions(const Context& cx) {
    const LmSetup s = cx.setup("positions");
    std::cout << "Four ways to put positions in (Section 9.6): trained on " << s.T << "-token windows, evaluated at 1x, 2x, 4x\n  "
              << setup_line(s, cx.corpus) << "\n  (each model: the full block of the ladder; the learned table has " << 4 * s.T
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
    enum { learned, sinusoidal, rope, alibi };
    using P = std::vector<PositionRun>;
    // at(r, kind, m): held-out perplexity of model `kind` at window m (1x, 2x, 4x)
    const auto at = [](const P& r, std::size_t kind, std::size_t m) { return r[kind].at[m].perplexity; };
    std::cout << "  Learned positions at 4x: " << fmt(at(runs, learned, 2) / at(runs, learned, 0), 1) << "x their perplexity at 1x; sinusoidal "
              << fmt(at(runs, sinusoidal, 2) / at(runs, sinusoidal, 0), 1) << "x; RoPE " << fmt(at(runs, rope, 2) / at(runs, rope, 0), 2)
              << "x; ALiBi " << fmt(at(runs, alibi, 2) / at(runs, alibi, 0), 2) << "x.\n";
    const std::vector<P> per_seed = at_other_seeds(runs, cx.seeds(), "positions", [&](std::uint64_t seed) {
        LmSetup o = s;
        o.seed = seed;
        return run_positions(cx.corpus, o);
    });
    // Each part as a figure, in % of a perplexity: learned best at 1x (the best other's perplexity over learned's,
    // less 1); learned collapses (more than 2x at 4x); sinusoids fail (more than 1.5x at 4x); RoPE degrades least
    // (the better of learned and sinusoidal over RoPE's, less 1, at 2x and at 4x, whichever is less); ALiBi
    // improves (at 2x and at 4x below its 1x; the chapter's 4x: 44.95 / 42.49, 5.8 %). The weaker statement: ALiBi holds (no worse at 2x, within 5 % at
    // 4x) rather than improves, and learned need not be best at the training length.
    const auto ratio = [](double a, double b) { return 100 * (a / b - 1); };
    const SeedFigure collapses = figure_over(per_seed, "learned 4x / 1x - 2", [&](const P& r) { return at(r, learned, 2) / at(r, learned, 0) - 2; },
                                             kNoSize, "", 2);
    const SeedFigure fails = figure_over(per_seed, "sinusoidal 4x / 1x - 1.5", [&](const P& r) { return at(r, sinusoidal, 2) / at(r, sinusoidal, 0) - 1.5; },
                                         kNoSize, "", 2);
    const SeedFigure graceful = figure_over(per_seed, "RoPE's lead at 2x and 4x", [&](const P& r) {
        return std::min(ratio(std::min(at(r, learned, 1), at(r, sinusoidal, 1)), at(r, rope, 1)),
                        ratio(std::min(at(r, learned, 2), at(r, sinusoidal, 2)), at(r, rope, 2)));
    });
    cx.claims.add("C29", "past the training window: learned collapses, sinusoids fail, RoPE degrades gracefully, ALiBi improves " + claim_setup(s, cx.corpus),
                  "learned best at 64 then collapses; sinusoids do not extrapolate; RoPE degrades; ALiBi 44.95 -> 42.49",
                  OverSeeds{.seeds = cx.seeds(),
                            .as_stated = {figure_over(per_seed, "learned's lead at 1x",
                                                      [&](const P& r) { return ratio(std::min({at(r, sinusoidal, 0), at(r, rope, 0), at(r, alibi, 0)}), at(r, learned, 0)); }),
                                          collapses, fails, graceful,
                                          figure_over(per_seed, "ALiBi's gain at 2x", [&](const P& r) { return ratio(at(r, alibi, 0), at(r, alibi, 1)); }),
                                          figure_over(per_seed, "ALiBi's gain at 4x", [&](const P& r) { return ratio(at(r, alibi, 0), at(r, alibi, 2)); },
                                                      100.0 * (44.95 / 42.49 - 1))},
                            .weaker_name = "learned positions collapse past the window, sinusoids fail, RoPE degrades least, and ALiBi holds (no worse at "
                                           "2x, within 5 % at 4x)",
                            .weaker = {collapses, fails, graceful, figure_over(per_seed, "ALiBi's hold: its 1x over 2x, and 1.05 x 1x over 4x", [&](const P& r) {
                                           return std::min(ratio(at(r, alibi, 0), at(r, alibi, 1)), ratio(1.05 * at(r, alibi, 0), at(r, alibi, 2)));
                                       })}});
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
    std::cout << "One block against two (Section 9.8): GPT-2-shaped pre-norm blocks, trained on the whole training split\n  "
              << setup_line(s, cx.corpus) << "\n  (each training token is seen about "
              << fmt(static_cast<double>(s.steps) * static_cast<double>(s.batch * s.T) / static_cast<double>(cx.corpus.train.size()), 1)
              << " times; the chapter's, about 60)\n";
    const std::vector<DepthRun> runs = run_depth(cx.corpus, s);
    Table t(std::cout, {{"model", 12}, {"parameters", 12, 0}, {"train ppl", 11, 2}, {"held-out ppl", 14, 2}}, "  ");
    t.header();
    for (const DepthRun& r : runs) t.row({r.run.name, r.run.params, r.train.perplexity, r.run.heldout.perplexity});
    const DepthRun &one = runs[0], &two = runs[1];
    // Overfitting needs the data seen many times: under 10 passes (the chapter's about 60) the budget cannot
    // show the claim either way, and no verdict is given.
    const double passes = static_cast<double>(s.steps) * static_cast<double>(s.batch * s.T) / static_cast<double>(cx.corpus.train.size());
    if (passes < 10) {
        cx.claims.skip("C37", "this budget sees each training token " + fmt(passes, 1) + " times (the chapter's about 60; overfitting needs "
                              "10 at least): two blocks fit the training data " + (two.train.perplexity < one.train.perplexity ? "better" : "no better") +
                              " (" + vs(two.train.perplexity, one.train.perplexity) + "), held out " + vs(two.run.heldout.perplexity, one.run.heldout.perplexity) +
                              " (" + setup_line(s, cx.corpus) + ")");
    } else {
    const bool fits = two.train.perplexity < one.train.perplexity, worse = two.run.heldout.perplexity > one.run.heldout.perplexity;
    cx.claims.add("C37", "two blocks fit the training data better and held-out data worse than one",
                  "train 14.49 vs 18.77, held-out 40.57 vs 38.07",
                  "train " + vs(two.train.perplexity, one.train.perplexity) + ", held-out " +
                      vs(two.run.heldout.perplexity, one.run.heldout.perplexity),
                  judge({.as_stated = fits && worse, .weaker = fits}),
                  fits && !worse ? "the weaker statement holds: two blocks fit the training data better; the held-out gap does not "
                                   "appear — two blocks are no worse held out (" + vs(two.run.heldout.perplexity, one.run.heldout.perplexity) +
                                   "): at this budget the models see each token " +
                                   fmt(static_cast<double>(s.steps) * static_cast<double>(s.batch * s.T) / static_cast<double>(cx.corpus.train.size()), 1) +
                                   " times and do not overfit"
                  : fits ? std::string()
                         : "two blocks do not fit the training data better (" + vs(two.train.perplexity, one.train.perplexity) +
                               "): at this budget each token is seen " +
                               fmt(static_cast<double>(s.steps) * static_cast<double>(s.batch * s.T) / static_cast<double>(cx.corpus.train.size()), 1) +
                               " times, and the deeper model has not caught up");
    }
    std::vector<svg::Series> curves;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        curves.push_back(loss_curve(runs[i].run, i == 0 ? 8 : 1));
        svg::Series h{runs[i].run.name + ", held-out", {}, {}, kColours[i == 0 ? 8 : 1], true};
        for (const auto& [step, loss] : runs[i].run.log.evals) h.x.push_back(step), h.y.push_back(loss);
        curves.push_back(h);
    }
    svg::write_file(cx.svg, svg::line_plot(curves, {"Training loss (solid) and held-out loss (dashed)", "step", cx.loss_axis()}));
    std::cout << "  wrote " << cx.svg << " (training and held-out loss)\n\n";
}

void bench(const Context& cx, int threads) {
    LmSetup s = cx.setup("ladder");
    const int steps = cx.steps > 0 ? cx.steps : 20;
    const double rate = ladder_block_tokens_per_s(cx.corpus.vocab_size(), s, steps, threads);
    std::cout << "Training throughput of the ladder's full block: width " << s.d_model << ", context " << s.T << ", batch " << s.batch
              << ", " << s.n_heads << " heads, d_ff " << 4 * s.d_model << ", vocabulary " << cx.corpus.vocab_size() << "\n";
    if (cx.device == Device::gpu)
        std::cout << "  attn (C++/CUDA) on " << gpu_description() << ", " << steps << " steps: tokens/s " << fmt(rate, 0) << "\n";
    else
        std::cout << "  attn (C++), " << threads << " thread" << (threads > 1 ? "s" : "") << ", " << steps
                  << " steps: tokens/s " << fmt(rate, 0) << "\n";
    std::cout << "  (tools/lm_throughput.sh runs this beside the same model in PyTorch)\n";
}

// The chapter's corpus through its tokenizer: 459,760 tokens, 2.43 characters a token; ours beside it.
std::string chapter_tokens_line(const Corpus& corpus) {
    const double tokens = static_cast<double>(corpus.train.size() + corpus.heldout.size()), chapter = 459'760;
    return "  the chapter's tokenizer on this text: 459,760 tokens, 2.43 characters a token; ours: " +
           fmt_count(static_cast<long long>(tokens)) + " (" + (tokens >= chapter ? "+" : "") + fmt(100 * (tokens / chapter - 1), 2) +
           " %), " + fmt(static_cast<double>(corpus.characters) / tokens, 3) + " characters a token\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::string command = "all";
    std::uint64_t seed = 0;
    int steps = 0, threads = 1, vocab = 0, n_seeds = 0;
    bool quick = false, full = false, mine = false;
    std::string corpus_name = "shakespeare", svg_path = "12_language_model.svg", tokenizer;
    Cli cli("12_language_model",
            "Sections 9.1-9.8, the trained experiments: the ladder, the sqrt(d_k) ablation, warmup, position extrapolation, depth");
    cli.add_choice("experiment", command, {"ladder", "scale", "norm", "positions", "depth", "all", "bench"},
                   "which experiment to run, before or after the flags (default all)");
    cli.add("--corpus", corpus_name, kCorpusHelp);
    cli.add("--tokenizer", tokenizer,
            "bytes or bpe: what a token is. bpe is the chapter's (byte-level BPE, merges learned on the training 90 % only); "
            "default: bpe at --full, bytes otherwise (bpe's 1024-wide readout makes the default size's models about 3x slower: "
            "the ladder at 100 steps took 21.5 s of CPU against 6.4 s for bytes)");
    cli.add("--vocab", vocab, "with --tokenizer bpe: the vocabulary, 257 to 4096 (default 1024, the chapter's)", 0, 1'000'000);
    cli.add("--seed", seed, "random seed (initialisation and batches): the tables and pictures are this seed's");
    cli.add("--seeds", n_seeds,
            "the trained claims are decided over this many seeds, --seed and the ones after it (default 5, at --full 1: hours "
            "a seed); a claim one seed decides is `unresolved`",
            1, 100);
    cli.add_switch("--quick", quick, "a test's size: seconds per experiment, the shape of each result only");
    cli.add_switch("--full", full,
                   "the chapter's size and setup (BPE with a vocabulary of 1024, width 128, context 128, 3000 steps of AdamW at 1e-3, "
                   "batch 64; d_k up to 1024): hours");
    cli.add("--steps", steps, "training steps for every model (0: each experiment's own; with --resume, 0 trains nothing more: "
                               "it evaluates and samples the saved models); --full's 3000 take hours", 0, 100'000);
    cli.add("--threads", threads, "bench: BLAS threads; more than the cores only contend", 1, 256);
    std::string device_flag = "cpu";
    cli.add("--device", device_flag,
            "where the models train: the gpu runs the same models and loop on a CUDA device (the ladder, positions and depth "
            "experiments, and bench; scale and norm read the CPU model's attention weights and stay on the CPU); without a GPU, "
            "gpu says so and exits 77",
            {"cpu", "gpu"});
    Checkpoints checkpoints;
    add_checkpoint_flags(cli, checkpoints);
    Engine engine = Engine::fast;
    add_engine_flag(cli, engine);
    cli.add("--svg", svg_path, "the picture of the experiment (with all: the ladder's; the others beside it, FILE_scale.svg, ...)");
    cli.add_switch("--mine", mine, "also run your exercises 9.1-9.3 (the position tables these models use) beside the reference");
    cli.footer("experiments: 12_language_model [ladder|scale|norm|positions|depth|all|bench] [flags] (default: all,\n"
               "every experiment but bench, in the chapter's order)");

    // A usage error the flags' ranges cannot see (which tokenizer, and --vocab only with bpe): exit 2 with the usage.
    std::string usage_error;
    const int rc = run_program(cli, argc, argv, [&] {
        if (!tokenizer.empty() && tokenizer != "bytes" && tokenizer != "bpe")
            usage_error = "--tokenizer must be bytes or bpe, got '" + tokenizer + "'";
        else if (vocab != 0 && tokenizer != "bpe" && !(full && tokenizer.empty()))
            usage_error = "--vocab sets the BPE vocabulary: give it with --tokenizer bpe (or --full), not with bytes";
        else if (vocab != 0 && (vocab < 257 || vocab > 4096))
            usage_error = "--vocab must be in [257, 4096], got " + std::to_string(vocab);
        if (!usage_error.empty()) return;
        // --resume DIR --steps 0: evaluate and sample the saved models, training nothing.
        checkpoints.evaluate_only = !checkpoints.resume_dir.empty() && cli.given("--steps") && steps == 0;
        if (checkpoints.evaluate_only)
            std::cout << "--steps 0 --resume " << checkpoints.resume_dir << ": every model is loaded from its checkpoint and trained no\n"
                      << "further (the setup lines say how each experiment trains by default)\n\n";
        require(!(quick && full), "12_language_model", "--quick and --full choose different sizes: give one");
        const Device device = device_for(device_flag);
        const LmSize size = quick ? LmSize::quick : full ? LmSize::full : LmSize::standard;
        if (n_seeds == 0) n_seeds = full ? 1 : 5;
        const CorpusOptions options{.tokenizer = tokenizer.empty() ? lm_tokenizer(size) : tokenizer == "bpe" ? Tokenizer::bpe : Tokenizer::bytes,
                                    .vocab = vocab != 0 ? static_cast<std::size_t>(vocab) : kChapterVocab};
        std::cout << cli.title() << "\n\n";
        const Corpus corpus = named_corpus(corpus_name, options);
        std::cout << "Corpus: " << corpus.source << ", " << fmt_count(static_cast<long long>(corpus.bytes)) << " bytes, "
                  << fmt_count(static_cast<long long>(corpus.characters)) << " characters; ";
        if (corpus.tokenizer == Tokenizer::bpe)
            std::cout << "byte-level BPE with a vocabulary of " << corpus.vocab_size() << ", its merges learned on the training 90 % only";
        else
            std::cout << corpus.vocab_size() << " distinct bytes are the vocabulary";
        std::cout << "; " << fmt_count(static_cast<long long>(corpus.train.size())) << " tokens train, "
                  << fmt_count(static_cast<long long>(corpus.heldout.size())) << " are held out; " << fmt(corpus.tokens_per_character(), 3)
                  << " tokens per character\n"
                  << (corpus.source == kShakespeare && corpus.tokenizer == Tokenizer::bpe && corpus.vocab_size() == kChapterVocab
                          ? chapter_tokens_line(corpus) : std::string())
                  << "Size: " << (quick ? "--quick (the shape of each result, in seconds)" : full ? "--full (the chapter's)" : "default")
                  << "; every perplexity is per " << corpus.unit()
                  << (corpus.tokenizer == Tokenizer::bpe ? " (the chapter's: per BPE token, vocabulary 1024, 2.43 characters a token)\n\n"
                                                         : ", not per BPE token as in the chapter, so smaller (--tokenizer bpe for the chapter's)\n\n");
        if (device == Device::gpu)
            std::cout << "--device gpu: the ladder, positions and depth experiments train on " << gpu_description() << "\n\n";
        ClaimReport claims;
        if (command == "bench") {
            bench(Context{corpus, size, seed, n_seeds, steps, svg_path, claims, checkpoints, device, engine}, threads);
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
            experiments.at(name)(Context{corpus, size, seed, n_seeds, steps, svg, claims, checkpoints, device, engine});
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
    if (usage_error.empty()) return rc;
    std::cerr << cli.program() << ": " << usage_error << "\n\n";
    cli.print_usage(std::cerr);
    return 2;
}
