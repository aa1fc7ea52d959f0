#include "chapters/03_scaling/claims.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "report/table.hpp"

namespace attn::sec03 {

namespace c92 = chapter92;

Claim c06_claim(const std::vector<VarianceRow>& rows, int pairs) {
    bool var_ok = true;
    std::string var_ours;
    for (const VarianceRow& r : rows) {
        var_ok = var_ok && std::fabs(r.var / r.d - 1) < c92::variance_tolerance(r.d, pairs) && std::fabs(r.mean) / r.sqrt_d < c92::mean_tolerance(pairs);
        var_ours += (var_ours.empty() ? "" : ", ") + fmt(r.var, 3);
    }
    return {.id = "C06",
            .what = "mean 0 and Var(q.k) = d at every width",
            .chapter = "3.975, 16.071, 64.249, 253.065, 1015.562",
            .ours = var_ours,
            .verdict = agrees_if(var_ok),
            .why = "±5 sd of Var(q.k)/d around 1 (sd sqrt((2 + 6/d)/pairs) = " + fmt(c92::variance_tolerance(rows.front().d, pairs) / 5, 4) + " … " +
                   fmt(c92::variance_tolerance(rows.back().d, pairs) / 5, 4) +
                   ", as the spread over 30 seeds shows: 03_scaling --seeds 30); |mean|/sqrt(d) ±5 sd (" + fmt(c92::mean_tolerance(pairs), 3) + ")"};
}

Claim c07_claim(const Vec& p, const std::vector<double>& p8_sum1) {
    const std::vector<double> chapter_p8 = {0.16, 0.02, 0.79, 0.03};
    return {.id = "C07",
            .what = "softmax(s) and softmax(8 s)",
            .chapter = "(0.26, 0.20, 0.32, 0.22) and (0.16, 0.02, 0.79, 0.03)",
            .ours = fmt_vec(p, 2) + " and " + fmt_vec(p8_sum1, 2) + " (rounded to sum 1)",
            .verdict = agrees_if(fmt_vec(p, 2) == "(0.26, 0.20, 0.32, 0.22)" && fmt_vec(p8_sum1, 2) == fmt_vec(chapter_p8, 2)),
            .why = {}};
}

Claim c08_claim(double max_soft, double max_one_hot) {
    return {.id = "C08",
            .what = "near one-hot every Jacobian entry is near 0",
            .chapter = "every entry near 0",
            .ours = "largest |entry| " + fmt(max_one_hot, 4) + " (soft row: " + fmt(max_soft, 4) + ")",
            .verdict = agrees_if(max_one_hot < 0.01 && max_soft > 0.1),
            .why = {}};
}

namespace {
// The row of a table at d_k, or nullptr where the claims' 64 keys or that width are missing.
template <class Row>
const Row* row_at(const std::vector<Row>& rows, int keys, int d_k) {
    if (keys != 64) return nullptr;
    for (const Row& r : rows)
        if (r.d_k == d_k) return &r;
    return nullptr;
}

// The tolerances: 4 sd of the difference between the chapter's run and ours (each figure's sd over 30 seeds,
// from 03_scaling --seeds 30, times sqrt(2)), plus half the chapter's last digit (scaling_tables.hpp).
std::string spread_reason() {
    return "±" + fmt(c92::kSpreads, 0) +
           " sd of the difference between the chapter's run and ours (sqrt(2) x each figure's sd over 30 "
           "seeds, 03_scaling --seeds 30), plus half the chapter's last digit: ";
}
}  // namespace

void add_entropy_claims(ClaimReport& claims, const std::vector<EntropyRow>& rows, int keys) {
    if (const EntropyRow* e1024 = row_at(rows, keys, 1024)) {
        const double tol_h = c92::tolerance(c92::kEntropySd, c92::kThreeDecimals);
        const double tol_w = c92::tolerance(c92::kMaxWeightSd, c92::kThreeDecimals);
        double lo = 1e9, hi = 0;
        bool scaled_ok = true;
        for (const EntropyRow& e : rows) {
            lo = std::min(lo, e.scaled.entropy), hi = std::max(hi, e.scaled.entropy);
            scaled_ok = scaled_ok && std::fabs(e.scaled.entropy - c92::kScaledEntropy) < c92::tolerance(c92::kScaledEntropySd.at(e.d_k), c92::kTwoDecimals);
        }
        const int first = rows.front().d_k, last = rows.back().d_k;
        claims.add("C09", "d_k = 1024 unscaled: entropy, mean largest weight; scaled entropy at every d_k",
                   fmt(c92::kEntropy1024, 3) + " nat, " + fmt(c92::kMaxWeight1024, 3) + "; ≈ " + fmt(c92::kScaledEntropy, 2),
                   fmt(e1024->unscaled.entropy, 3) + " nat, " + fmt(e1024->unscaled.max_weight, 3) + "; " + fmt(lo, 2) + " … " + fmt(hi, 2),
                   agrees_if(std::fabs(e1024->unscaled.entropy - c92::kEntropy1024) < tol_h &&
                             std::fabs(e1024->unscaled.max_weight - c92::kMaxWeight1024) < tol_w && scaled_ok),
                   spread_reason() + "±" + fmt(tol_h, 3) + " nat, ±" + fmt(tol_w, 3) + "; scaled ±" +
                       fmt(c92::tolerance(c92::kScaledEntropySd.at(first), c92::kTwoDecimals), 3) + " at d_k = " + std::to_string(first) +
                       " (64 keys, drawn once, move it most) … ±" + fmt(c92::tolerance(c92::kScaledEntropySd.at(last), c92::kTwoDecimals), 3) +
                       " at d_k = " + std::to_string(last));
    } else {
        claims.skip("C09", "needs --keys 64 and --max-d ≥ 1024");
    }
    if (const EntropyRow* e256 = row_at(rows, keys, 256)) {
        claims.add("C10", "unscaled at d_k = 256 a fresh head attends to about one token of 64", "one token",
                   fmt(e256->unscaled.eff_tokens, 2) + " effective tokens", agrees_if(e256->unscaled.eff_tokens < c92::kOneToken),
                   "rounding: exp(entropy) below " + fmt(c92::kOneToken, 1) + " is one token; its sd over 30 seeds is " +
                       fmt(c92::kEffTokens256Sd, 3) + ", so no seed sits near that bound");
    } else {
        claims.skip("C10", "needs --keys 64 and --max-d ≥ 256");
    }
}

void add_saturation_claim(ClaimReport& claims, const std::vector<SaturationRow>& rows, int keys) {
    const SaturationRow* s1024 = row_at(rows, keys, 1024);
    if (!s1024) {
        claims.skip("C11", "needs --keys 64 and --max-d ≥ 1024");
        return;
    }
    const double tol_frozen = c92::tolerance(c92::kFrozenSd, c92::kTenths);
    double trace_lo = 1, trace_hi = 0, frozen_scaled = 0;
    bool trace_ok = true;
    for (const SaturationRow& r : rows) {
        trace_lo = std::min(trace_lo, r.trace_scaled), trace_hi = std::max(trace_hi, r.trace_scaled);
        frozen_scaled = std::max(frozen_scaled, r.frozen_scaled);
        trace_ok = trace_ok && std::fabs(r.trace_scaled - c92::kTraceScaled) < c92::tolerance(c92::kTraceScaledSd.at(r.d_k), c92::kTwoDecimals);
    }
    const int first = rows.front().d_k, last = rows.back().d_k;
    claims.add("C11", "scaled trace ≈ 0.96 at every width; frozen rows at d_k = 1024 unscaled; none scaled", fmt(c92::kTraceScaled, 2) + "; about 7 in 10; none",
               fmt(trace_lo, 3) + " … " + fmt(trace_hi, 3) + "; " + fmt(s1024->frozen_unscaled, 3) + "; " + fmt(frozen_scaled, 3),
               agrees_if(trace_ok && std::fabs(s1024->frozen_unscaled - c92::kFrozen1024) < tol_frozen && frozen_scaled == 0),
               spread_reason() + "trace ±" + fmt(c92::tolerance(c92::kTraceScaledSd.at(first), c92::kTwoDecimals), 3) + " at d_k = " +
                   std::to_string(first) + " … ±" + fmt(c92::tolerance(c92::kTraceScaledSd.at(last), c92::kTwoDecimals), 3) + " at d_k = " +
                   std::to_string(last) + "; frozen ±" + fmt(tol_frozen, 3) + " (the chapter counts in tenths); none is none");
}

}  // namespace attn::sec03
