// Claims C12, C24, C29, C33, C37 — the trained language models of 003 (12_language_model), asserted in
// shape: who beats whom. Each runs its experiment at the --quick size (seconds) on the generated stories,
// seed 0, exactly as `12_language_model --quick` does; the tolerances sit beside each check with their
// reason. The default and --full sizes are the program's; their numbers are in its output.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "chapters/08_normalization/warmup.hpp"
#include "chapters/12_language_model/depth.hpp"
#include "chapters/12_language_model/ladder.hpp"
#include "chapters/12_language_model/position_extrapolation.hpp"
#include "chapters/12_language_model/scale_ablation.hpp"
#include "chapters/12_language_model/sizes.hpp"

using namespace attn;
namespace c95 = attn::chapter95;  // C24's criterion, with its reasons

namespace {
const Corpus& stories() {
    static const Corpus c = make_corpus(generate_stories(0, 1'000'000), "generated stories (seed 0)");
    return c;
}
LmSetup quick(const std::string& experiment) {
    LmSetup s = lm_setup(experiment, LmSize::quick);
    s.progress = false;
    return s;
}
}  // namespace

TEST_CASE("C33: the ladder, from a no-context baseline to a full block", "[claims][C33][sec12]") {
    const LmSetup s = quick("ladder");
    const std::vector<LmRun> runs = run_ladder(stories(), s);
    REQUIRE(runs.size() == 9);
    auto ppl = [&](std::size_t i) { return runs[i].heldout.perplexity; };
    enum { base, uniform, positions, residual, replacing, added, heads, ffn, layernorm };
    INFO("baseline " << ppl(base) << ", uniform " << ppl(uniform) << ", + positions " << ppl(positions) << ", + residual "
                     << ppl(residual) << ", replacing " << ppl(replacing) << ", added " << ppl(added) << ", 4 heads " << ppl(heads)
                     << ", + FFN " << ppl(ffn) << ", + LayerNorm " << ppl(layernorm));
    // Averaging drowns the current token: much worse than no context at all (the chapter: 4x; 1.5x here).
    CHECK(ppl(uniform) > 1.5 * ppl(base));
    // Positions go into the sum and the sum forgets them: within 10 % (the chapter: 2.14 points of 188).
    CHECK(std::fabs(ppl(positions) - ppl(uniform)) < 0.1 * ppl(uniform));
    // The residual keeps the token: back to about the baseline, within 25 % (the chapter: +1.2 %).
    CHECK(std::fabs(ppl(residual) / ppl(base) - 1) < 0.25);
    // Learned weights beat equal ones; four heads beat one; the head added beats the head replacing.
    CHECK(ppl(added) < ppl(residual));
    CHECK(ppl(heads) < ppl(added));
    CHECK(ppl(added) < ppl(replacing));
    // The FFN helps; LayerNorm helps on top of it.
    CHECK(ppl(ffn) < ppl(heads));
    CHECK(ppl(layernorm) < ppl(ffn));
    // Parameters counted from the tensors: each rung adds exactly its pieces.
    const std::size_t V = stories().vocab_size(), d = s.d_model, T = s.T;
    CHECK(runs[base].params == V * d + d * V + V);                  // wte, W_out, b_out
    CHECK(runs[uniform].params == runs[base].params + 2 * d * d);    // W_v, W_o
    CHECK(runs[positions].params == runs[uniform].params + T * d);   // wpe
    CHECK(runs[residual].params == runs[positions].params);          // an addition has no parameters
    CHECK(runs[added].params == runs[residual].params + 2 * d * d);  // W_q, W_k
    CHECK(runs[heads].params == runs[added].params);                 // heads split the width
    CHECK(runs[ffn].params == runs[heads].params + 8 * d * d + 5 * d);
    CHECK(runs[layernorm].params == runs[ffn].params + 6 * d);       // three LayerNorms, gain and bias
}

TEST_CASE("C12: without the division by sqrt(d_k), little is lost at a small width, much at a large one", "[claims][C12][sec12]") {
    const std::vector<std::size_t> widths = scale_widths(LmSize::quick);
    const std::vector<ScaleRun> runs = run_scale(stories(), quick("scale"), widths);
    REQUIRE(runs.size() == 4);
    const ScaleRun &small_s = runs[0], &small_u = runs[1], &big_s = runs[2], &big_u = runs[3];
    REQUIRE((small_s.scaled && !small_u.scaled && big_s.d_k == 256 && !big_u.scaled));
    const double c_small = small_u.run.heldout.perplexity / small_s.run.heldout.perplexity - 1;
    const double c_big = big_u.run.heldout.perplexity / big_s.run.heldout.perplexity - 1;
    INFO("cost " << c_small << " at d_k " << small_s.d_k << ", " << c_big << " at 256; unscaled std at 256 " << big_u.init.score_std
                 << " -> " << big_u.end.score_std << ", rows > 0.99 " << big_u.end.one_hot << "; scaled std " << big_s.end.score_std);
    // At init, scores have std about sqrt(d_k) without the division (Proposition 9.1; LayerNorm makes q and k
    // entries unit-variance) and about 1 with it: within 15 % over 16 windows.
    CHECK(big_u.init.score_std == Approx(16.0).epsilon(0.15));
    CHECK(big_s.init.score_std == Approx(1.0).epsilon(0.15));
    // The cost of dropping the division grows with the width: > 15 % at 256, and over three times that at 16.
    CHECK(c_big > 0.15);
    CHECK(c_big > 3 * c_small);
    // At 256 the unscaled head runs away: its score std grows, most rows are one-hot (> 0.99 on one token).
    CHECK(big_u.end.score_std > big_u.init.score_std);
    CHECK(big_u.end.one_hot > 0.5);
    // At the small width it comes back: its std falls. The scaled heads stay soft.
    CHECK(small_u.end.score_std < small_u.init.score_std);
    CHECK(big_s.end.one_hot < 0.05);
    CHECK(big_s.end.score_std < 0.5 * big_u.end.score_std);
}

TEST_CASE("C24: 12 blocks — post-norm without warmup fails, warmup rescues it, pre-norm needs none", "[claims][C24][sec12]") {
    const std::vector<WarmupRun> runs = run_warmup(stories(), quick("norm"), warmup_setup(LmSize::quick));
    REQUIRE(runs.size() == 4);
    REQUIRE((runs[2].norm == Norm::post && runs[2].warmup == 0 && runs[3].warmup > 0));
    const WarmupVerdict v = warmup_verdict(runs, WarmupCriterion::rescue_only);
    INFO("pre-norm " << v.pre << " / " << v.pre_warmup << " with warmup; post-norm " << v.post << " / " << v.post_warmup << " with warmup");
    // Several times worse without warmup (the chapter: 8x; a collapse to about the unigram model here).
    CHECK(v.post > c95::kSeveralTimes * v.pre);
    // With warmup post-norm is rescued from the collapse. 300 steps after the warmup are too few for it to
    // catch up with pre-norm (here 1.6x; at the default size, 1000 steps, within 25 %; the chapter: equal).
    CHECK(v.post_warmup < v.post / c95::kRescue);
    CHECK(v.post_warmup < 2 * v.pre);
    // Pre-norm trains the same with or without warmup: within 10 %.
    CHECK(std::fabs(v.pre_warmup / v.pre - 1) < c95::kNeedsNone);
    CHECK(v.agrees());  // the verdict 12_language_model --quick prints
}

TEST_CASE("C29: positions past the training window — learned and sinusoidal collapse, RoPE degrades, ALiBi holds",
          "[claims][C29][sec12]") {
    const LmSetup s = quick("positions");
    const std::vector<PositionRun> runs = run_positions(stories(), s);
    REQUIRE(runs.size() == 4);
    auto at = [&](std::size_t kind, std::size_t m) { return runs[kind].at[m].perplexity; };
    enum { learned, sinusoidal, rope, alibi };
    std::string table;
    for (const PositionRun& r : runs)
        table += r.run.name + ": " + std::to_string(r.at[0].perplexity) + ", " + std::to_string(r.at[1].perplexity) + ", " +
                 std::to_string(r.at[2].perplexity) + "; ";
    INFO(table);
    REQUIRE(runs[alibi].lengths == std::vector<std::size_t>{s.T, 2 * s.T, 4 * s.T});
    // Learned rows past the window were never trained, and sinusoids were never read there: both collapse.
    CHECK(at(learned, 2) > 3 * at(learned, 0));
    CHECK(at(sinusoidal, 2) > 3 * at(sinusoidal, 0));
    // RoPE degrades less than either, at 2x and at 4x.
    CHECK(at(rope, 1) < std::min(at(learned, 1), at(sinusoidal, 1)));
    CHECK(at(rope, 2) < std::min(at(learned, 2), at(sinusoidal, 2)));
    // ALiBi improves at 2x; at 4x it holds within 5 % (it improves there too at the default size, 1000 steps on
    // 64-token windows; the chapter: 44.95 -> 42.49).
    CHECK(at(alibi, 1) < at(alibi, 0));
    CHECK(at(alibi, 2) < 1.05 * at(alibi, 0));
    CHECK(at(alibi, 2) < at(rope, 2));
}

TEST_CASE("C37: two blocks fit the training data better and held-out data worse than one", "[claims][C37][sec12]") {
    const std::vector<DepthRun> runs = run_depth(stories(), quick("depth"), depth_train_tokens(LmSize::quick));
    REQUIRE(runs.size() == 2);
    const DepthRun &one = runs[0], &two = runs[1];
    INFO("train " << two.train.perplexity << " vs " << one.train.perplexity << ", held-out " << two.run.heldout.perplexity << " vs "
                  << one.run.heldout.perplexity);
    CHECK(two.run.params > one.run.params);
    CHECK(two.train.perplexity < one.train.perplexity);
    CHECK(two.run.heldout.perplexity > one.run.heldout.perplexity);
    // Both overfit: held-out far above training.
    CHECK(one.run.heldout.perplexity > 1.5 * one.train.perplexity);
}

TEST_CASE("Learned positions past the training window keep their initial rows, shrunk only by weight decay", "[sec12][positions]") {
    const std::size_t window = 8, max_T = 32;
    ModelConfig c{.vocab = stories().vocab_size(), .max_T = max_T, .d_model = 16, .n_heads = 2};
    Model model(c, 1);
    const Mat before = model.params()["wpe"].value;
    TrainConfig tc;
    tc.steps = 20, tc.batch = 4, tc.progress = false;
    train_on_tokens(model, stories().train, window, tc);
    const Mat& after = model.params()["wpe"].value;
    const double shrink = std::pow(1.0 - tc.opt.lr * tc.opt.weight_decay, tc.steps);
    for (std::size_t t = 0; t < max_T; ++t) {
        const double ratio = static_cast<double>(after(t, 0)) / before(t, 0);
        INFO("row " << t);
        if (t < window) CHECK(std::fabs(ratio - shrink) > 1e-4);  // trained
        else CHECK(ratio == Approx(shrink).epsilon(1e-5));      // untouched but for the decay
    }
}

TEST_CASE("The experiments are bit-for-bit reproducible given the seed", "[sec12][train]") {
    // Short runs of every kind of model the experiments train: the ladder's, RoPE and ALiBi, a Transformer stack.
    auto short_setup = [](const std::string& experiment, std::uint64_t seed) {
        LmSetup s = quick(experiment);
        s.steps = 15, s.eval_windows = 8, s.seed = seed;
        return s;
    };
    auto same = [](const LmRun& a, const LmRun& b) {
        return a.log.losses == b.log.losses && a.heldout.loss == b.heldout.loss;
    };
    const std::vector<PositionRun> p1 = run_positions(stories(), short_setup("positions", 5));
    const std::vector<PositionRun> p2 = run_positions(stories(), short_setup("positions", 5));
    for (std::size_t i = 0; i < p1.size(); ++i) {
        INFO(p1[i].run.name);
        CHECK(same(p1[i].run, p2[i].run));
        CHECK(p1[i].at[2].loss == p2[i].at[2].loss);
    }
    WarmupSetup w = warmup_setup(LmSize::quick);
    w.n_layers = 2, w.warmup = 5;
    const std::vector<WarmupRun> n1 = run_warmup(stories(), short_setup("norm", 5), w);
    const std::vector<WarmupRun> n2 = run_warmup(stories(), short_setup("norm", 5), w);
    for (std::size_t i = 0; i < n1.size(); ++i) CHECK(same(n1[i].run, n2[i].run));
    // Another seed trains differently, so the checks above can fail.
    const std::vector<PositionRun> p3 = run_positions(stories(), short_setup("positions", 6));
    CHECK_FALSE(same(p1[0].run, p3[0].run));
}
