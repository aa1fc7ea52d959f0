// Claims C22–C24 — Section 9.5: where the LayerNorm sits (pre-norm vs post-norm). Each verdict is the program's own
// criterion (chapters/08_normalization/claims.cpp; C24's warmup.cpp), fed here what the experiments measure, the
// chapter's figures and contradicting ones.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "chapters/08_normalization/claims.hpp"
#include "chapters/08_normalization/norm_placement.hpp"
#include "chapters/08_normalization/warmup.hpp"
#include "core/rng.hpp"
#include "text/corpus.hpp"

using namespace attn;
using namespace attn::sec08;  // chapters/08_normalization/
namespace c95 = attn::sec08::chapter95;  // C23's and C24's figures and criteria, with their reasons

TEST_CASE("C22: a pre-norm block with silent sub-layers is the identity — a post-norm one normalises every row", "[claims][C22][sec08]") {
    Rng rng(22);
    for (float scale : {1.0f, 10.0f}) {
        const Mat x = rng.normal_mat(12, 32) * scale + scale;  // (B·T, d), rows far from mean 0 and std 1
        const BlockStructure pre = zeroed_block_structure(Norm::pre, x, 2, 6, 4, 0);
        const BlockStructure post = zeroed_block_structure(Norm::post, x, 2, 6, 4, 0);
        INFO("input scale " << scale);
        // pre-norm: x + 0 + 0, bit for bit (the residual path is never normalised); post-norm: every row leaves with
        // mean 0 and std 1, whatever its scale coming in (the program's criterion)
        const Claim c22 = c22_claim({pre}, {post});
        INFO(c22.ours);
        CHECK(c22.verdict == Verdict::agrees);
        CHECK(pre.max_row_mean > 0.1 * scale);  // …so the input's offset survives
        CHECK(post.identity_error > 0.5);       // LN(LN(x)) is not x
    }
    // The checks have teeth: a block with no LayerNorm at all is the identity too, but does not normalise its rows, so
    // post-norm's checks fail on it — a post-norm block that forgot its LayerNorm would not pass.
    const Mat x = rng.normal_mat(12, 32) * 10.0f + 10.0f;
    const BlockStructure none = zeroed_block_structure(Norm::none, x, 2, 6, 4, 0);
    CHECK(none.identity_error == 0.0);
    CHECK(none.max_row_mean > 1.0);
    CHECK(none.max_row_std > 2.0);
    CHECK(c22_claim({none}, {none}).verdict == Verdict::differs);
    // x must hold B·T rows
    CHECK_THROWS_WITH(zeroed_block_structure(Norm::pre, rng.normal_mat(11, 32), 2, 6, 4, 0),
                      Catch::Contains("x is (11, 32) for B·T = 2·6"));
}

TEST_CASE("C23: at initialisation our gradients fall from block 1 to block 12 — the chapter's rise (1.32, 1.65) is outside our spread",
          "[claims][C23][sec08]") {
    // The chapter: last/first 1.32 (pre-norm) and 1.65 (post-norm), one model each. Ours, on the generated stories, at
    // 5 models per case (windows of 16, batch 8: the ratios are the same at the chapter's 128 x 64, measured 0.87 and
    // 0.97 over 5 models): below 1 under PyTorch's init (about 0.86 and 1.0), and far below under GPT-2's (0.27 and
    // 0.08), where post-norm's ratio is even the smaller. The verdict both 08_normalization runs print is DIFFERS.
    const Corpus corpus = make_corpus(generate_stories(0, 100000), "stories");
    const ModelSize stack{.vocab = corpus.vocab_size(), .max_T = 16, .d_model = 128, .n_heads = 4, .n_layers = 12};
    auto profile = [&](Norm norm, Init init) { return init_gradient_profile(norm_stack(stack, norm, init), corpus.train, 8, 16, 0, 5); };
    const InitGradients pytorch{profile(Norm::pre, Init::pytorch), profile(Norm::post, Init::pytorch)};
    const InitGradients gpt2{profile(Norm::pre, Init::gpt2), profile(Norm::post, Init::gpt2)};
    const Spread &pre = pytorch.pre.model_ratio, &post = pytorch.post.model_ratio;
    INFO("PyTorch: pre " << pre.mean << " ± " << pre.std << ", post " << post.mean << " ± " << post.std << "; GPT-2: pre "
                         << gpt2.pre.model_ratio.mean << ", post " << gpt2.post.model_ratio.mean);
    REQUIRE(pre.n == 5);
    REQUIRE(pytorch.pre.per_block.size() == 12);
    // The chapter's ratios are far above our spread (the criterion's `within` fails by over 4 sd of the difference) …
    CHECK(pre.mean < c95::kPreRatio);
    CHECK(post.mean < c95::kPostRatio);
    // … pre-norm's gradient falls towards the last block, under either initialisation …
    CHECK(pre.max < 1.0);
    CHECK(gpt2.pre.model_ratio.max < 1.0);
    CHECK(gpt2.post.model_ratio.max < 1.0);
    // … post-norm's leans more to the last block than pre-norm's under PyTorch's init, and less under GPT-2's.
    CHECK(post.mean > pre.mean);
    CHECK(gpt2.post.model_ratio.mean < gpt2.pre.model_ratio.mean);
    for (std::size_t l = 0; l < 12; ++l) CHECK(pytorch.post.per_block[l] > pytorch.pre.per_block[l]);
    const Claim c23 = c23_claim(pytorch, gpt2);  // the program's claim, with gradient_verdict's verdict and reasons
    INFO(c23.why);
    CHECK(c23.verdict == Verdict::differs);
    CHECK_THAT(c23.why, Catch::Contains("falls from block 1"));
}

namespace {
// The four runs of run_warmup with only their held-out perplexities: pre-norm, pre-norm + warmup, post-norm, post-norm + warmup.
std::vector<WarmupRun> perplexities(double pre, double pre_warmup, double post, double post_warmup) {
    std::vector<WarmupRun> runs(4);
    const double ppl[4] = {pre, pre_warmup, post, post_warmup};
    for (int i = 0; i < 4; ++i) {
        runs[i].norm = i < 2 ? Norm::pre : Norm::post;
        runs[i].warmup = i % 2 ? 200 : 0;
        runs[i].run.heldout.perplexity = ppl[i];
    }
    return runs;
}
}  // namespace

TEST_CASE("C24: the criterion — each part as stated, and `shape` when warmup only rescues post-norm", "[claims][C24][sec08]") {
    // The chapter's own four figures agree with its claim.
    const WarmupVerdict chapter = warmup_verdict(perplexities(37.82, 37.62, 308.05, 37.88), WarmupCriterion::as_stated);
    CHECK(chapter.several_times_worse);
    CHECK(chapter.matches);
    CHECK(chapter.pre_needs_none);
    CHECK(chapter.verdict() == Verdict::agrees);
    // Rescued but left behind (9.9x, then 1.19x): only the weaker statement holds.
    const WarmupVerdict behind = warmup_verdict(perplexities(2.09, 1.99, 20.66, 2.49), WarmupCriterion::as_stated);
    CHECK_FALSE(behind.matches);
    CHECK(behind.rescued);
    CHECK(behind.verdict() == Verdict::shape);
    // Post-norm only 2x worse: not "several times" — differs, however warmup does.
    CHECK(warmup_verdict(perplexities(10, 10, 20, 10), WarmupCriterion::as_stated).verdict() == Verdict::differs);
    // Pre-norm helped a lot by warmup: it "needs" it — only the weaker statement holds.
    const WarmupVerdict needs = warmup_verdict(perplexities(10, 5, 80, 10), WarmupCriterion::as_stated);
    CHECK_FALSE(needs.pre_needs_none);
    CHECK(needs.verdict() == Verdict::shape);
    // Warmup that does not rescue post-norm (above a third of its collapse): differs.
    CHECK(warmup_verdict(perplexities(10, 10, 80, 40), WarmupCriterion::as_stated).verdict() == Verdict::differs);
    // The bound is a few percent: a 1 % gap matches, a 20 % gap does not.
    CHECK(warmup_verdict(perplexities(10, 10, 80, 10.1), WarmupCriterion::as_stated).matches);
    CHECK_FALSE(warmup_verdict(perplexities(10, 10, 80, 12), WarmupCriterion::as_stated).matches);
    // The --quick note changes the words, never the verdict.
    CHECK(warmup_verdict(perplexities(2.09, 1.99, 20.66, 2.49), WarmupCriterion::rescue_only).verdict() == Verdict::shape);
    CHECK_THROWS_WITH(warmup_verdict(std::vector<WarmupRun>(3), WarmupCriterion::as_stated), Catch::Contains("expected the four runs"));
}

TEST_CASE("C24 at 08_normalization's --quick size (60 steps): post-norm is worse and warmup helps, but the claim does not hold yet",
          "[claims][C24][sec08]") {
    // The --quick size of 08_normalization (60 steps, 12 of warmup), judged by C24's one criterion (warmup.hpp). At
    // 60 steps pre-norm has barely started to learn (perplexity 7.8, against 2.0 after 200), so post-norm's collapse
    // is only 2.5–2.9x pre-norm's and warmup brings it to 1.4–1.9x (seeds 0–3): the criterion says differs, and the
    // program, which knows this budget cannot show the claim, skips it. On the generated stories post-norm does
    // collapse several-fold after 200 steps (9.9x, then 1.19x with warmup); on the chapter's Shakespeare, what
    // 08_normalization runs by default (150 steps), only 2.5-2.6x, then 1.15-1.47x (docs/runs/norm-08-default-seeds.txt;
    // "programs: 08_normalization_runs": differs), and
    // 12_language_model's --quick norm experiment differs at each of its five seeds.
    const Corpus corpus = make_corpus(generate_stories(0, 300000), "stories");
    const LmSetup setup{.d_model = 128, .T = 16, .batch = 8, .n_heads = 4, .steps = 60, .lr = 3e-3f, .clip = 0, .eval_windows = 64,
                        .seed = 0, .progress = false};
    const WarmupVerdict v = warmup_verdict(run_warmup(corpus, setup, {.n_layers = 12, .warmup = 12}), WarmupCriterion::rescue_only);
    INFO("pre " << v.pre << ", pre+warmup " << v.pre_warmup << ", post " << v.post << ", post+warmup " << v.post_warmup);
    CHECK(v.post > 2 * v.pre);             // worse without warmup (2.5–2.9x over seeds 0–3) …
    CHECK(v.post_warmup < v.post);         // … and warmup helps
    CHECK_FALSE(v.several_times_worse);    // but not yet "several times" (3x) worse …
    CHECK_FALSE(v.matches);                // … nor does post-norm with warmup match pre-norm yet
    CHECK(v.verdict() == Verdict::differs);
}

TEST_CASE("C22, C23's criteria: the chapter's figures agree, figures that contradict them differ, the ordering alone is C23's shape",
          "[claims][C22][C23][sec08]") {
    // C22: pre-norm gives x back exactly; post-norm rows at mean 0, std 1 (to float rounding), at two scales
    const BlockStructure identity{.identity_error = 0, .max_row_mean = 5, .min_row_std = 3, .max_row_std = 30};
    const BlockStructure normalised{.identity_error = 5, .max_row_mean = 1e-7, .min_row_std = 0.99995, .max_row_std = 1.00005};
    CHECK(c22_claim({identity, identity}, {normalised, normalised}).verdict == Verdict::agrees);
    auto post_with = [&](auto change) {
        BlockStructure b = normalised;
        change(b);
        return c22_claim({identity, identity}, {normalised, b}).verdict;
    };
    CHECK(post_with([](BlockStructure& b) { b.max_row_mean = 10 * kRowMeanTol; }) == Verdict::differs);  // rows not centred
    CHECK(post_with([](BlockStructure& b) { b.min_row_std = 1 - 10 * kRowStdTol; }) == Verdict::differs);  // one row squashed
    CHECK(post_with([](BlockStructure& b) { b.max_row_std = 1 + 10 * kRowStdTol; }) == Verdict::differs);  // one row stretched
    BlockStructure almost = identity;
    almost.identity_error = 1e-7;  // pre-norm must give x back bit for bit
    CHECK(c22_claim({identity, almost}, {normalised, normalised}).verdict == Verdict::differs);
    CHECK(c22_claim({}, {}).verdict == Verdict::differs);  // nothing measured

    // C23: the per-model last/first ratios (mean ± sd over 8 models) under PyTorch's init and GPT-2's
    auto ratios = [](double mean, double sd) {
        GradientProfile g;
        g.ratio = mean, g.model_ratio = {.mean = mean, .std = sd, .min = mean - 2 * sd, .max = mean + 2 * sd, .n = 8};
        return g;
    };
    auto c23 = [&](double pt_pre, double pt_post, double gpt2_pre, double gpt2_post) {
        const Claim c = c23_claim({.pre = ratios(pt_pre, 0.05), .post = ratios(pt_post, 0.08)},
                                  {.pre = ratios(gpt2_pre, 0.05), .post = ratios(gpt2_post, 0.08)});
        UNSCOPED_INFO(c.ours << " — " << c.why);
        return c.verdict;
    };
    CHECK(c23(c95::kPreRatio, c95::kPostRatio, 0.9, 1.3) == Verdict::agrees);       // the chapter's ratios
    CHECK(c23(c95::kPreRatio + 0.1, c95::kPostRatio - 0.1, 0.9, 1.3) == Verdict::agrees);  // within 4 sd of them
    CHECK(c23(1.0, 1.5, 0.5, 1.2) == Verdict::shape);                                 // post-norm's lead only, at both inits
    CHECK(c23(1.0, 1.5, 0.5, 0.5) == Verdict::differs);                               // … not under GPT-2's
    CHECK(c23(1.0, 1.0, 0.5, 1.2) == Verdict::differs);                               // … nor under PyTorch's
    CHECK(c23(0.86, 0.98, 0.27, 0.08) == Verdict::differs);                           // ours: falling, the chapter's far off
    CHECK(c23(c95::kPreRatio, c95::kPostRatio + 0.5, 0.9, 1.3) == Verdict::shape);   // post-norm's too steep
}

// C24's rerun spread is measured, not chosen: pre-norm's held-out perplexity over the five seeds committed in
// docs/runs/norm-08-default-seeds.txt (08_normalization's default, tiny Shakespeare) gives warmup.hpp's kRerunSd.
TEST_CASE("C24's rerun spread is the one the committed seeds of 08_normalization's default measure", "[claims][C24][sec08]") {
    std::ifstream in(std::string(ATTN_RUNS_DIR) + "/norm-08-default-seeds.txt");
    REQUIRE(in);
    std::vector<double> pre;
    for (std::string line; std::getline(in, line);) {
        const std::string key = "pre-norm, no warmup";
        const auto at = line.find(key);
        if (at != std::string::npos) pre.push_back(std::stod(line.substr(at + key.size())));
    }
    REQUIRE(pre.size() == 5);
    const double mean = std::accumulate(pre.begin(), pre.end(), 0.0) / 5;
    double ss = 0;
    for (double p : pre) ss += (p - mean) * (p - mean);
    const double relative = std::sqrt(ss / 4) / mean;
    INFO("measured: sd " << std::sqrt(ss / 4) << " over mean " << mean << " = " << relative);
    CHECK(std::fabs(relative - c95::kRerunSd) < 5e-5);
    CHECK(pre[0] == 11.23);  // seed 0 is the _runs test's: the file is today's default, not another setup's
}
