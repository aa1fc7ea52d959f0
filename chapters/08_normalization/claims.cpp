#include "chapters/08_normalization/claims.hpp"

#include <algorithm>
#include <cmath>

#include "report/table.hpp"

namespace attn::sec08 {

Claim c22_claim(const std::vector<BlockStructure>& pre, const std::vector<BlockStructure>& post) {
    double pre_identity = 0, post_mean = 0, post_std_dev = 0;
    for (const BlockStructure& s : pre) pre_identity = std::max(pre_identity, s.identity_error);
    for (const BlockStructure& s : post)
        post_mean = std::max(post_mean, s.max_row_mean), post_std_dev = std::max({post_std_dev, std::fabs(s.min_row_std - 1), std::fabs(s.max_row_std - 1)});
    return {.id = "C22",
            .what = "pre-norm x + f(LN(x)) leaves the residual path alone; post-norm LN(x + f(x)) normalises it",
            .chapter = "the two formulas",
            .ours = "zeroed block: pre-norm max |y - x| = " + fmt_sci(pre_identity) + "; post-norm rows mean " + fmt_sci(post_mean) + ", std 1 ± " +
                    fmt_sci(post_std_dev),
            .verdict = agrees_if(!pre.empty() && !post.empty() && pre_identity == 0.0 && post_mean < kRowMeanTol && post_std_dev < kRowStdTol),
            .why = {}};
}

namespace {
// How far the chapter's one-model ratio is from our mean over the models, in sd of their difference.
double sd_from_chapter(const Spread& ours, double chapter) {
    const double sd = std::max(ours.std * std::sqrt(1.0 + 1.0 / ours.n), 1e-12);
    return (ours.mean - chapter) / sd;
}
// How far post-norm's mean ratio is above pre-norm's, in sd of the difference of the two means.
double post_lead(const InitGradients& g) {
    const Spread &a = g.pre.model_ratio, &b = g.post.model_ratio;
    const double sd = std::max(std::sqrt(a.std * a.std / a.n + b.std * b.std / b.n), 1e-12);
    return (b.mean - a.mean) / sd;
}
std::string ratio_sd(const Spread& s) { return fmt(s.mean, 2) + " ± " + fmt(s.std, 2); }
std::string lead_words(double lead) { return (lead >= 0 ? "leads pre-norm's by " : "trails pre-norm's by ") + fmt(std::fabs(lead), 1) + " sd"; }
}  // namespace

GradientVerdict gradient_verdict(const InitGradients& pytorch, const InitGradients& gpt2) {
    namespace c95 = chapter95;
    auto within = [](const Spread& ours, double chapter) {
        const double sd = ours.std * std::sqrt(1.0 + 1.0 / ours.n);
        return std::fabs(ours.mean - chapter) < c95::kSpreads * sd + c95::kRatioRounding;
    };
    const Spread &pre = pytorch.pre.model_ratio, &post = pytorch.post.model_ratio;
    const double lead_pt = post_lead(pytorch), lead_gpt2 = post_lead(gpt2);
    GradientVerdict v;
    v.verdict = judge({.as_stated = within(pre, c95::kPreRatio) && within(post, c95::kPostRatio),
                       .weaker = lead_pt > c95::kSpreads && lead_gpt2 > c95::kSpreads});
    const std::string figures =
        "PyTorch's init, last/first per model over " + std::to_string(pre.n) + " models: " + ratio_sd(pre) + " pre-norm, " +
        ratio_sd(post) + " post-norm (the chapter's 1.32 and 1.65 are " + fmt(std::fabs(sd_from_chapter(pre, c95::kPreRatio)), 1) +
        " and " + fmt(std::fabs(sd_from_chapter(post, c95::kPostRatio)), 1) + " sd away; " + fmt(c95::kSpreads, 0) +
        " allowed); post-norm's mean " + lead_words(lead_pt) + ", and " + lead_words(lead_gpt2) + " under GPT-2's init (" + ratio_sd(gpt2.pre.model_ratio) + ", " + ratio_sd(gpt2.post.model_ratio) + ")";
    if (v.verdict == Verdict::agrees) v.why = "±" + fmt(c95::kSpreads, 0) + " sd of the chapter's one model against our mean; " + figures;
    else if (v.verdict == Verdict::shape)
        v.why = "only the ordering: post-norm's last/first ratio is above pre-norm's under both initialisations (by " +
                fmt(c95::kSpreads, 0) + "+ sd), not the chapter's figures; " + figures;
    else {
        const bool falls = pre.mean < 1 && post.mean < 1;
        v.why = std::string(falls ? "the gradient falls from block 1 to the last block, where the chapter's rises; " : "") +
                "the chapter's ratios are outside our spread, and post-norm's lead over pre-norm is not clear under both "
                "initialisations: " + figures;
    }
    return v;
}

Claim c23_claim(const InitGradients& pytorch, const InitGradients& gpt2) {
    namespace c95 = chapter95;
    const GradientVerdict gv = gradient_verdict(pytorch, gpt2);
    return {.id = "C23",
            .what = "12 blocks at initialisation: the gradient norm rises from block 1 to block 12, last/first ≈ 1.32 pre-norm, ≈ 1.65 post-norm",
            .chapter = fmt(c95::kPreRatio, 2) + " (pre), " + fmt(c95::kPostRatio, 2) + " (post)",
            .ours = fmt(pytorch.pre.ratio, 2) + " (pre), " + fmt(pytorch.post.ratio, 2) + " (post) under PyTorch's init; " + fmt(gpt2.pre.ratio, 2) +
                    ", " + fmt(gpt2.post.ratio, 2) + " under GPT-2's",
            .verdict = gv.verdict,
            .why = gv.why};
}

void add_c24_claim(ClaimReport& claims, const WarmupVerdict& verdict, const WarmupSize& size) {
    // 60 steps, 12 of them warmup, leave post-norm no time to catch up after its warmup: no verdict at --quick.
    if (size.quick)
        claims.skip("C24", "--quick trains " + std::to_string(size.steps) + " steps, " + std::to_string(size.warmup) +
                               " of them warmup: too few for post-norm to catch up after it (without --quick: " + std::to_string(size.default_steps) +
                               "; the chapter: 1000)");
    else
        add_claim(claims, verdict,
                  "(" + size.corpus + ", bytes, " + std::to_string(size.layers) + " blocks of width " + std::to_string(size.width) + ", context " +
                      std::to_string(size.window) + ", batch " + std::to_string(size.batch) + ", " + std::to_string(size.steps) +
                      " steps of AdamW at 3e-3, one seed)");
}

}  // namespace attn::sec08
