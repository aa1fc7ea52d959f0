#include "chapters/08_normalization/warmup.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "chapters/08_normalization/norm_placement.hpp"
#include "core/error.hpp"
#include "core/side_by_side.hpp"
#include "gpu/placement.hpp"
#include "report/table.hpp"

namespace attn::sec08 {

std::vector<WarmupRun> run_warmup(const Corpus& corpus, const LmSetup& s, const WarmupSetup& ws) {
    std::vector<WarmupRun> runs;
    for (Norm norm : {Norm::pre, Norm::post})
        for (int warmup : {0, ws.warmup}) runs.push_back({norm, warmup, {}});
    // The four runs side by side on the cores (the same bits as one after the other); on a GPU one after the other.
    side_by_side(runs.size(), [&](std::size_t i) {
        WarmupRun& r = runs[i];
        const std::unique_ptr<LanguageModel> model = make_model(
            norm_stack({.vocab = corpus.vocab_size(), .max_T = s.T, .d_model = s.d_model, .n_heads = s.n_heads, .n_layers = ws.n_layers}, r.norm),
            s.seed, s.device, s.engine, s.gpu);
        LmSetup with = s;
        with.warmup = r.warmup;
        const std::string name = std::string(r.norm == Norm::pre ? "pre-norm" : "post-norm") +
                                 (r.warmup > 0 ? ", " + std::to_string(r.warmup) + "-step warmup" : ", no warmup");
        r.run = train_lm_on_corpus(*model, corpus, with, name);
    }, s.device == Device::gpu ? 1 : 0);
    return runs;
}

WarmupVerdict warmup_verdict(const std::vector<WarmupRun>& runs, WarmupCriterion criterion) {
    require(runs.size() == 4, "warmup_verdict", "expected the four runs of run_warmup, got " + std::to_string(runs.size()));
    namespace c95 = chapter95;
    WarmupVerdict v;
    v.pre = runs[0].run.heldout.perplexity, v.pre_warmup = runs[1].run.heldout.perplexity;
    v.post = runs[2].run.heldout.perplexity, v.post_warmup = runs[3].run.heldout.perplexity;
    v.criterion = criterion;
    v.several_times_worse = v.post >= c95::kSeveralTimes * v.pre;
    v.matches = std::fabs(v.post_warmup / v.pre - 1) < c95::kMatches;
    v.rescued = v.post_warmup < v.post / c95::kRescue;
    v.pre_needs_none = std::fabs(v.pre_warmup / v.pre - 1) < c95::kNeedsNone;
    return v;
}

OverSeeds warmup_over_seeds(const std::vector<WarmupVerdict>& per_seed, const std::vector<std::uint64_t>& seeds) {
    namespace c95 = chapter95;
    const auto figure = [&](std::string name, auto f, int digits, std::string unit) {
        return figure_over(per_seed, std::move(name), f, kNoSize, std::move(unit), digits);
    };
    const SeedFigure worse = figure("post-norm / pre-norm perplexity - " + fmt(c95::kSeveralTimes, 0),
                                    [](const WarmupVerdict& v) { return v.post / v.pre - c95::kSeveralTimes; }, 2, "");
    return OverSeeds{
        .seeds = seeds,
        .as_stated = {worse,
                      figure(fmt(100 * c95::kMatches, 1) + " % - post-norm with warmup's distance from pre-norm",
                             [](const WarmupVerdict& v) { return 100 * (c95::kMatches - std::fabs(v.post_warmup / v.pre - 1)); }, 1, "%"),
                      figure(fmt(100 * c95::kNeedsNone, 1) + " % - what warmup moves pre-norm",
                             [](const WarmupVerdict& v) { return 100 * (c95::kNeedsNone - std::fabs(v.pre_warmup / v.pre - 1)); }, 1, "%")},
        .weaker_name = "post-norm without warmup is several times worse (" + fmt(c95::kSeveralTimes, 0) +
                       "x), and warmup rescues it (below 1/" + fmt(c95::kRescue, 0) + " of its perplexity)",
        .weaker = {worse, figure("post-norm / (" + fmt(c95::kRescue, 0) + " x post-norm with warmup) - 1",
                                 [](const WarmupVerdict& v) { return v.post / (c95::kRescue * v.post_warmup) - 1; }, 2, "")}};
}

Verdict WarmupVerdict::verdict() const {
    return judge({.as_stated = several_times_worse && matches && pre_needs_none,
                  .weaker = several_times_worse && rescued});
}

void add_claim(ClaimReport& claims, const WarmupVerdict& v, const std::string& setup) {
    namespace c95 = chapter95;
    const Verdict verdict = v.verdict();
    const std::string bounds = "worse: at least " + fmt(c95::kSeveralTimes, 0) +
                               "x (\"several\"; the chapter's 8x is one collapse); matches and needs none: within " +
                               fmt(100 * c95::kMatches, 1) + " %, " + fmt(c95::kRerunSpreads, 0) +
                               " sd of the difference between two runs (pre-norm's perplexity moves by " + fmt(100 * c95::kRerunSd, 1) +
                               " % from seed to seed at 08_normalization's default size)";
    const std::string matches = v.matches ? "" : "with warmup post-norm ends at " + fmt(v.post_warmup / v.pre, 2) + "x pre-norm's perplexity, not level with it";
    const std::string needs = v.pre_needs_none ? "" : "pre-norm moves by " + fmt(100 * std::fabs(v.pre_warmup / v.pre - 1), 1) + " % with warmup";
    const std::string failed = matches + (!matches.empty() && !needs.empty() ? "; " : "") + needs;
    std::string why;
    if (verdict == Verdict::agrees) why = bounds;
    else if (verdict == Verdict::shape)
        why = "only \"post-norm without warmup is several times worse (" + fmt(v.post / v.pre, 1) + "x) and warmup rescues it\": " + failed +
              " (" + bounds + ")" +
              (v.criterion == WarmupCriterion::rescue_only ? "; a --quick run leaves few steps after the warmup to catch up" : "");
    else
        why = std::string(v.several_times_worse ? "" : "post-norm without warmup is only " + fmt(v.post / v.pre, 1) + "x worse; ") +
              (v.rescued ? "" : "warmup does not rescue post-norm; ") + (failed.empty() ? "" : failed + "; ") + bounds;
    claims.add("C24", "post-norm without warmup is several times worse; with warmup it matches pre-norm; pre-norm needs none " + setup,
               "308.05 vs 37.82 (8x); 37.88 with warmup; pre-norm 37.62 with warmup",
               fmt(v.post, 2) + " vs " + fmt(v.pre, 2) + " (" + fmt(v.post / v.pre, 1) + "x); " + fmt(v.post_warmup, 2) + " with warmup (" +
                   fmt(v.post_warmup / v.pre, 2) + "x); pre-norm " + fmt(v.pre_warmup, 2) + " with warmup" +
                   (v.criterion == WarmupCriterion::rescue_only ? " (a --quick size)" : ""),
               verdict, why);
}

}  // namespace attn::sec08
