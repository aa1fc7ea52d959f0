// Section 9.5's training experiment (C24): the deep stack of norm_placement.hpp, pre-norm and post-norm,
// each trained without learning-rate warmup and with it, scored by held-out perplexity. The chapter: 12
// blocks, 1000 steps at lr 3e-3 — post-norm without warmup several times worse, with warmup level with
// pre-norm, and pre-norm needing none.
//
// 08_normalization runs it at the chapter's width and rate; 12_language_model runs it again at its own
// sizes (its `norm` experiment). Both judge it by the criterion below: 08 at one seed (warmup_verdict), 12
// over its seeds (warmup_over_seeds, the same bounds as figures); 08 --quick, too short to show it, skips it.
#pragma once

#include <string>
#include <vector>

#include "report/claims.hpp"
#include "text/corpus.hpp"
#include "train/train.hpp"

namespace attn::sec08 {

struct WarmupSetup {
    std::size_t n_layers = 12;
    int warmup = 200;  // steps of linear warmup in the runs with warmup
};

// Four runs, in this order: pre-norm without and with warmup, post-norm without and with warmup. Each
// trains norm_stack at setup's width, heads and context (setup.warmup is ignored: the runs set their own).
struct WarmupRun {
    Norm norm = Norm::pre;
    int warmup = 0;
    LmRun run;
};
std::vector<WarmupRun> run_warmup(const Corpus& corpus, const LmSetup& setup, const WarmupSetup& warmup);

// C24's criterion, the one each program prints and each claim test asserts, with the reason for each bound. The
// chapter (12 blocks, 1000 steps, lr 3e-3): pre-norm 37.82, with 200-step warmup 37.62; post-norm 308.05, with
// warmup 37.88 — "post-norm without warmup is eight times worse, and post-norm with warmup matches pre-norm exactly";
// warmup is a patch for one placement, pre-norm does not need it. Each part is checked as stated:
//   worse    post-norm without warmup at least kSeveralTimes pre-norm's perplexity. The chapter's words are "eight
//            times"; CLAIMS.md reads them as "several times", and a collapse's size is not a figure that repeats, so
//            the check is that it is several-fold: 3x or more. (Ours, 08_normalization's default on tiny
//            Shakespeare, seeds 0-4: 2.58, 2.47, 2.49, 2.51, 2.52x: under it at every seed.)
//   matches  post-norm with warmup within kMatches of pre-norm without (the chapter: 37.88 / 37.82 = 1.0016), and
//   needs    pre-norm within kNeedsNone with and without warmup (the chapter: 37.62 / 37.82 = 0.995): "within what
//   none     a rerun gives". Pre-norm's held-out perplexity moves from seed to seed by kRerunSd (08_normalization's
//            default on tiny Shakespeare, 150 steps, seeds 0-4: 11.23, 11.87, 11.58, 11.63, 11.43 — mean 11.55,
//            sd 0.24, relative 2.06 %; docs/runs/norm-08-default-seeds.txt, held to this constant by a claim test), so
//            two runs of equally good models differ by sqrt(2) kRerunSd; the bound is kRerunSpreads of those sd
//            (11.7 %), as for Section 9.2's figures. Measured at 08_normalization's default size only; 12_language_model
//            and --quick runs are judged by the same bound. Ours at those seeds: post-norm with warmup / pre-norm 1.23,
//            1.31, 1.15, 1.47, 1.25 (every seed outside the bound); pre-norm with / without warmup 0.99, 0.96, 0.99,
//            1.01, 0.99 (every seed inside it).
// When post-norm without warmup is several times worse and warmup rescues it — below 1/kRescue of its perplexity
// without warmup — but "matches" or "needs none" fails, the verdict is `shape`, naming that weaker statement.
namespace chapter95 {
inline constexpr double kSeveralTimes = 3.0;
inline constexpr double kRerunSd = 0.0206, kRerunSpreads = 4.0;
inline constexpr double kMatches = kRerunSpreads * 1.4142135623730951 * kRerunSd, kNeedsNone = kMatches;
inline constexpr double kRescue = 3.0;
}  // namespace chapter95

// How the runs were sized: at the chapter's size, or at a --quick one, with too few steps after the warmup for
// post-norm to catch up. Both are judged by the one criterion above; rescue_only only adds a note to 08's output.
enum class WarmupCriterion { as_stated, rescue_only };

struct WarmupVerdict {
    double pre = 0, pre_warmup = 0, post = 0, post_warmup = 0;  // held-out perplexities of the four runs
    WarmupCriterion criterion = WarmupCriterion::as_stated;
    bool several_times_worse = false;   // post ≥ kSeveralTimes · pre
    bool matches = false;               // |post_warmup / pre − 1| < kMatches
    bool rescued = false;               // post_warmup < post / kRescue: the weaker statement
    bool pre_needs_none = false;        // |pre_warmup / pre − 1| < kNeedsNone
    // agrees: all three as stated; shape: several times worse and rescued, but "matches" or "needs none" fails; else differs
    Verdict verdict() const;
    bool agrees() const { return verdict() == Verdict::agrees; }
};
WarmupVerdict warmup_verdict(const std::vector<WarmupRun>& runs, WarmupCriterion criterion);

// The verdict in a program's claims summary, beside the chapter's figures.
void add_claim(ClaimReport& claims, const WarmupVerdict& verdict, const std::string& setup);  // setup: "(corpus, …)"

// The same criterion over seeds (claims.hpp's judge), one WarmupVerdict per seed: each of its tests as a figure
// that is positive where it holds (post / pre − kSeveralTimes; kMatches − |post_warmup / pre − 1|; kNeedsNone −
// |pre_warmup / pre − 1|; the weaker statement's post / (kRescue · post_warmup) − 1).
OverSeeds warmup_over_seeds(const std::vector<WarmupVerdict>& per_seed, const std::vector<std::uint64_t>& seeds);

}  // namespace attn::sec08
