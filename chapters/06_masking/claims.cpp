#include "chapters/06_masking/claims.hpp"

#include <cmath>

#include "math/averaging.hpp"
#include "math/stats.hpp"
#include "report/table.hpp"

namespace attn::sec06 {

Claim c15_claim(const AttentionSteps& open, const AttentionSteps& causal) {
    const Mat chapter_out = {{1, 4}, {2, 3}, {3, 2}};  // (3, 2)
    auto row = [&](std::ptrdiff_t t) { return fmt_vec(Vec(xt::row(causal.out, t)), 0); };
    return {.id = "C15",
            .what = "causal rows (1,0,0), (.5,.5,0), (1/3,1/3,1/3); outputs (1,4), (2,3), (3,2)",
            .chapter = "(1, 4), (2, 3), (3, 2)",
            .ours = row(0) + ", " + row(1) + ", " + row(2),
            .verdict = agrees_if(max_abs_diff(causal.out, chapter_out) < 1e-6 && max_abs_diff(causal.weights, averaging_matrix(3)) < 1e-7 &&
                                 max_abs_diff(open.weights, Mat(xt::ones<float>({3, 3}) / 3.0f)) < 1e-7),
            .why = {}};
}

Claim c16_claim(const Vec& after, const MaskedRow& before) {
    const Vec& w = before.weights;
    return {.id = "C16",
            .what = "masking after softmax leaves a row summing to 1/2; before: (1/3, 2/3, 0) and (1/3, 4/3)",
            .chapter = "1/2; (1/3, 2/3, 0), (1/3, 4/3)",
            .ours = as_fraction(xt::sum(after)()) + "; (" + as_fraction(w(0)) + ", " + as_fraction(w(1)) + ", " + as_fraction(w(2)) + "), (" +
                    as_fraction(before.out(0)) + ", " + as_fraction(before.out(1)) + ")",
            .verdict = agrees_if(std::fabs(xt::sum(after)() - 0.5) < 1e-6 && max_abs_diff(w, Vec{1.0f / 3, 2.0f / 3, 0}) < 1e-6 &&
                                 max_abs_diff(before.out, Vec{1.0f / 3, 4.0f / 3}) < 1e-6),
            .why = {}};
}

Claim c17_claim(const MaskedRow& before, const MaskedRow& swapped) {
    return {.id = "C17",
            .what = "v2 = (0, 20): second output 40/3 instead of 4/3, weights unchanged",
            .chapter = "40/3, same weights",
            .ours = as_fraction(swapped.out(1)) + ", weights change by " + fmt_sci(max_abs_diff(swapped.weights, before.weights)),
            .verdict = agrees_if(std::fabs(swapped.out(1) - 40.0 / 3) < 1e-5 && max_abs_diff(swapped.weights, before.weights) == 0.0),
            .why = {}};
}

Claim c18_claim(const FullyMaskedRow& row) {
    return {.id = "C18",
            .what = "all −∞ gives NaN; a large negative constant a uniform row; the reference refuses it",
            .chapter = "NaN; uniform; an error",
            .ours = fmt_vec(row.naive, 3) + "; " + fmt_vec(row.big_negative, 3) + "; error",
            .verdict = agrees_if(std::isnan(row.naive(0)) && max_abs_diff(row.big_negative, Vec{1.0f / 3, 1.0f / 3, 1.0f / 3}) < 1e-6 &&
                                 row.policy.find("fully masked") != std::string::npos),
            .why = {}};
}

Claim c19_claim(const MaskCells& c) {
    const std::size_t n = c.T;
    return {.id = "C19",
            .what = "opposite conventions, padding with causal, off-by-one cells",
            .chapter = "a test points at the exact cells",
            .ours = "the other convention read as this one: " + std::to_string(c.convention_wrong) + " of " + std::to_string(n * n) +
                    " cells wrong; causal and padding combined: " + std::to_string(c.combined_wrong) + " cells wrong; " +
                    std::to_string(c.leaks.size()) + " leaking and " + std::to_string(c.hides.size()) + " hiding cells found",
            .verdict = agrees_if(c.causal_wrong == 0 && c.convention_wrong == n * n && c.combined_wrong == 0 && !c.leaks.empty() &&
                                 c.leaks.size() == n - 1 && c.hides.size() == n && c.leaks.front() == "(0, 1) leaks the next token" &&
                                 c.hides.front() == "(0, 0) hides the current token"),
            .why = {}};
}

Claim c20_claim(const OnePass& pass) {
    return {.id = "C20",
            .what = "changing tokens after t leaves outputs <= t bit-identical",
            .chapter = "bit-identical",
            .ours = pass.prefix_identical ? "bit-identical at every t" : "some prefix changed",
            .verdict = agrees_if(pass.prefix_identical && pass.later_changed),
            .why = {}};
}

}  // namespace attn::sec06
