// Section 9.5's training experiment (C24): the deep stack of norm_placement.hpp, pre-norm and post-norm,
// each trained without learning-rate warmup and with it, scored by held-out perplexity. The chapter: 12
// blocks, 1000 steps at lr 3e-3 — post-norm without warmup several times worse, with warmup level with
// pre-norm, and pre-norm needing none.
//
// 08_normalization runs it at the chapter's width and rate; 12_language_model runs it again at its own
// sizes (its `norm` experiment). Both judge it by warmup_verdict below, as do their claim tests.
#pragma once

#include <vector>

#include "attn/claims.hpp"
#include "attn/corpus.hpp"
#include "attn/train.hpp"

namespace attn {

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

// C24's criterion, the one each program prints and each claim test asserts, with the reason for each bound.
namespace chapter95 {
inline constexpr double kSeveralTimes = 3.0;  // post-norm without warmup above 3x pre-norm's perplexity (the chapter: 8x)
inline constexpr double kMatches = 1.25;      // post-norm with warmup within 25 % of pre-norm (the chapter: 37.88 vs 37.82)
// --quick leaves too few steps after the warmup for post-norm to catch up: there warmup is asked to rescue it
// from the collapse — below a third of its perplexity without warmup — and no more.
inline constexpr double kRescue = 3.0;
inline constexpr double kNeedsNone = 0.1;     // pre-norm within 10 % with and without warmup (the chapter: 37.62 vs 37.82)
}  // namespace chapter95

// How much a run is asked: the claim as stated, or — at a --quick size, with too few steps after the warmup
// for post-norm to catch up — only that warmup rescues post-norm from its collapse (the output says so).
enum class WarmupCriterion { as_stated, rescue_only };

struct WarmupVerdict {
    double pre = 0, pre_warmup = 0, post = 0, post_warmup = 0;  // held-out perplexities of the four runs
    WarmupCriterion criterion = WarmupCriterion::as_stated;
    bool several_times_worse = false;   // post > kSeveralTimes · pre
    bool rescued = false;               // post_warmup < kMatches · pre; rescue_only: post_warmup < post / kRescue
    bool pre_needs_none = false;        // |pre_warmup / pre − 1| < kNeedsNone
    bool agrees() const { return several_times_worse && rescued && pre_needs_none; }
};
WarmupVerdict warmup_verdict(const std::vector<WarmupRun>& runs, WarmupCriterion criterion);

// The verdict in a program's claims summary, beside the chapter's figures.
void add_claim(ClaimReport& claims, const WarmupVerdict& verdict);

}  // namespace attn
