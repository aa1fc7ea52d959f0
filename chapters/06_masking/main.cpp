// Section 9.4 — "Mặt nạ": masks.
//
// A mask says which keys a query may read. It is applied before softmax, by setting the blocked scores
// to −∞, so their weights are exactly 0 and the rest renormalise. The causal mask lets one forward
// pass train T next-token predictions at once. Here: the chapter's small examples, what goes wrong when
// the mask is applied after softmax or is off by one, what a fully masked row does, and the proof that
// the causal mask really hides the future: changing later tokens leaves earlier outputs bit-identical.
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>

#include "06_masking/masking.hpp"
#include "attn/attention.hpp"
#include "attn/averaging.hpp"
#include "attn/claims.hpp"
#include "attn/cli.hpp"
#include "attn/mine.hpp"
#include "attn/model.hpp"
#include "reference/model.hpp"
#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "attn/stats.hpp"
#include "attn/svg.hpp"
#include "attn/table.hpp"
#include "chapters/06_masking/masks.hpp"

using namespace attn;
using namespace attn::sec06;  // this section's experiments (chapters/06_masking/)

namespace {
void print_mask(const Mask& m, const std::string& indent = "    ") {
    if (m.shape(0) > 16) {
        std::cout << indent << "(" << m.shape(0) << " x " << m.shape(1) << ": printed for T <= 16)\n";
        return;
    }
    for (std::size_t t = 0; t < m.shape(0); ++t) {
        std::cout << indent;
        for (std::size_t i = 0; i < m.shape(1); ++i) std::cout << (m(t, i) ? " 1" : " .");
        std::cout << "\n";
    }
}
}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int T = 6, pad = -1;
    bool left_pad = false, mine = false;
    std::string svg_path = "06_masking.svg";
    Cli cli("06_masking", "Section 9.4 — Masks (Mặt nạ)");
    cli.add("--seed", seed, "random seed (the model of the one-pass test)");
    cli.add("--T", T, "sequence length for the padding and one-pass examples; a mask needs two positions", 2, 512);
    cli.add("--pad", pad, "padding positions in the padding example (-1: a third of T); fewer than --T", -1, 511);
    cli.add_switch("--left-pad", left_pad,
                   "put the padding first: the first rows then have nothing to read, and the library stops with its error");
    cli.add("--svg", svg_path, "where to write the heatmaps of the causal and causal+padding weights");
    cli.add_switch("--mine", mine, "also run your exercises 6.1-6.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        if (pad < 0) pad = T / 3;
        require(pad < T, "06_masking", "--pad " + std::to_string(pad) + " leaves no real token in --T " + std::to_string(T));
        ClaimReport claims;

        // --- equal scores, with and without the causal mask (C15) --------------------------------------
        const Mat equal = xt::zeros<float>({3, 3});  // (3, 3): every pair scores the same
        const Mat v3 = {{1, 4}, {3, 2}, {5, 0}};     // (3, 2)
        const Mask causal3 = causal_mask(3);
        const AttentionSteps open = attention_from_scores(equal, v3), causal = attention_from_scores(equal, v3, &causal3);
        std::cout << "Three tokens with equal scores; values (1, 4), (3, 2), (5, 0)\n";
        std::cout << "  no mask: weights              causal mask: weights          causal outputs\n";
        for (std::size_t t = 0; t < 3; ++t) {
            const auto tt = static_cast<std::ptrdiff_t>(t);
            std::cout << "    " << fmt_vec(Vec(xt::row(open.weights, tt)), 3) << "       "
                      << fmt_vec(Vec(xt::row(causal.weights, tt)), 3) << "       " << fmt_vec(Vec(xt::row(causal.out, tt)), 0) << "\n";
        }
        std::cout << "  Each position averages itself and everything before it.\n\n";
        const Mat chapter_out = {{1, 4}, {2, 3}, {3, 2}};
        claims.add("C15", "causal rows (1,0,0), (.5,.5,0), (1/3,1/3,1/3); outputs (1,4), (2,3), (3,2)",
                   "(1, 4), (2, 3), (3, 2)", fmt_vec(Vec(xt::row(causal.out, 0)), 0) + ", " + fmt_vec(Vec(xt::row(causal.out, 1)), 0) +
                       ", " + fmt_vec(Vec(xt::row(causal.out, 2)), 0),
                   agrees_if(max_abs_diff(causal.out, chapter_out) < 1e-6 && max_abs_diff(causal.weights, averaging_matrix(3)) < 1e-7 &&
                       max_abs_diff(open.weights, Mat(xt::ones<float>({3, 3}) / 3.0f)) < 1e-7));

        // --- before softmax, not after (C16) and the weights do not decide the output (C17) ------------
        const Mat s = {{0.0f, std::log(2.0f), std::log(3.0f)}};  // (1, 3): the worked row's scores
        const Mat v = {{1, 0}, {0, 2}, {3, 1}};                   // (3, 2)
        Mask keep_two = Mask::from_shape({1, 3});
        keep_two(0, 0) = keep_two(0, 1) = true, keep_two(0, 2) = false;
        Vec after = xt::row(softmax_rows(s), 0);
        after(2) = 0.0f;  // the wrong way: zero the blocked weight after softmax
        const AttentionSteps before = attention_from_scores(s, v, &keep_two);
        const Vec w_before = xt::row(before.weights, 0), out_before = xt::row(before.out, 0);
        std::cout << "Masking the third key of scores (0, ln 2, ln 3)\n";
        std::cout << "  after softmax (wrong):  weights " << fmt_vec(after, 4) << ", sum " << fmt(xt::sum(after)(), 4) << "\n";
        std::cout << "  before softmax (right): weights " << fmt_vec(w_before, 4) << " = (" << as_fraction(w_before(0))
                  << ", " << as_fraction(w_before(1)) << ", " << as_fraction(w_before(2)) << "), output "
                  << fmt_vec(out_before, 4) << " = (" << as_fraction(out_before(0)) << ", " << as_fraction(out_before(1)) << ")\n";
        claims.add("C16", "masking after softmax leaves a row summing to 1/2; before: (1/3, 2/3, 0) and (1/3, 4/3)",
                   "1/2; (1/3, 2/3, 0), (1/3, 4/3)",
                   as_fraction(xt::sum(after)()) + "; (" + as_fraction(w_before(0)) + ", " + as_fraction(w_before(1)) + ", " +
                       as_fraction(w_before(2)) + "), (" + as_fraction(out_before(0)) + ", " + as_fraction(out_before(1)) + ")",
                   agrees_if(std::fabs(xt::sum(after)() - 0.5) < 1e-6 && max_abs_diff(w_before, Vec{1.0f / 3, 2.0f / 3, 0}) < 1e-6 &&
                       max_abs_diff(out_before, Vec{1.0f / 3, 4.0f / 3}) < 1e-6));

        Mat v20 = v;
        v20(1, 0) = 0, v20(1, 1) = 20;  // replace v2 by (0, 20)
        const AttentionSteps swapped = attention_from_scores(s, v20, &keep_two);
        const Vec w20 = xt::row(swapped.weights, 0), out20 = xt::row(swapped.out, 0);
        std::cout << "  v2 = (0, 20) instead:   weights " << fmt_vec(w20, 4) << " (unchanged), output " << fmt_vec(out20, 4)
                  << " = (" << as_fraction(out20(0)) << ", " << as_fraction(out20(1)) << ")\n";
        std::cout << "  The weights alone do not say what the output is: the values do.\n\n";
        claims.add("C17", "v2 = (0, 20): second output 40/3 instead of 4/3, weights unchanged", "40/3, same weights",
                   as_fraction(out20(1)) + ", weights change by " + fmt_sci(max_abs_diff(w20, w_before)),
                   agrees_if(std::fabs(out20(1) - 40.0 / 3) < 1e-5 && max_abs_diff(w20, w_before) == 0.0));

        // --- a fully masked row (C18) --------------------------------------------------------------------
        const float inf = std::numeric_limits<float>::infinity();
        const Vec all_blocked = {-inf, -inf, -inf};
        const Vec naive = naive_softmax(all_blocked);
        const Vec big_negative = softmax(Vec{-1e9f, -1e9f, -1e9f});
        std::string policy;
        try {
            Mask none = Mask::from_shape({1, 3});
            none.fill(false);
            masked_softmax(Mat(xt::zeros<float>({1, 3})), none);
        } catch (const Error& e) {
            policy = e.what();
        }
        std::cout << "A row with every key blocked\n";
        std::cout << "  softmax over (-inf, -inf, -inf), computed as usual (s - max, exp, /sum): " << fmt_vec(naive, 3) << "\n";
        std::cout << "  with -1e9 instead of -inf:                                               " << fmt_vec(big_negative, 3)
                  << "  (a uniform row over keys it must not read)\n";
        std::cout << "  this library's policy (an error, as the chapter's scalar reference): " << policy << "\n\n";
        claims.add("C18", "all −∞ gives NaN; a large negative constant a uniform row; the reference refuses it",
                   "NaN; uniform; an error", fmt_vec(naive, 3) + "; " + fmt_vec(big_negative, 3) + "; error",
                   agrees_if(std::isnan(naive(0)) && max_abs_diff(big_negative, Vec{1.0f / 3, 1.0f / 3, 1.0f / 3}) < 1e-6 &&
                       policy.find("fully masked") != std::string::npos));

        // --- conventions, padding, and the off-by-one (C19) ---------------------------------------------
        const std::size_t n = static_cast<std::size_t>(T);
        const Mask keep = causal_mask(n);
        std::cout << "The causal mask for T = " << n << " (1 = may read; rows are queries, columns keys)\n";
        print_mask(keep);
        const Mask blocked_reading = invert(keep);
        std::cout << "  The same policy in the \"true = blocked\" convention is its complement: reading one as the\n"
                  << "  other lets every query see only the future — " << causal_mask_errors(blocked_reading).size()
                  << " of " << n * n << " cells wrong.\n";
        const Mask padding = left_pad ? left_padding_mask(n, static_cast<std::size_t>(pad))
                                      : padding_mask(n, n - static_cast<std::size_t>(pad));
        const Mask combined = mask_and(keep, padding);
        std::cout << "\nCausal and padding (" << pad << " padding positions " << (left_pad ? "first" : "last") << "), combined:\n";
        print_mask(combined);
        // The combined mask in use: with left padding the first rows have nothing left to read.
        Rng rng(seed);
        const Mat scores = rng.normal_mat(n, n);  // (T, T)
        const Mat w_causal = masked_softmax(scores, keep);
        const Mat w_combined = masked_softmax(scores, combined);  // throws for a fully masked row
        svg::write_file(svg_path, svg::heatmap(w_combined, {"Causal + padding weights (T = " + std::to_string(n) + ")", {}, {}, n <= 16}));
        const std::string causal_svg = svg::sibling(svg_path, "_causal");
        svg::write_file(causal_svg, svg::heatmap(w_causal, {"Causal weights (T = " + std::to_string(n) + ")", {}, {}, n <= 16}));
        std::cout << "  weights under it, random scores:\n";
        if (n <= 16) print_matrix(std::cout, w_combined, 2, "    ", 5);
        std::cout << "\nwrote " << svg_path << " and " << causal_svg << "\n";

        const Mask shifted = [&] {
            Mask m = Mask::from_shape({n, n});
            for (std::size_t t = 0; t < n; ++t)
                for (std::size_t i = 0; i < n; ++i) m(t, i) = i <= t + 1;  // off by one: i ≤ t + 1
            return m;
        }();
        const Mask strict = [&] {
            Mask m = Mask::from_shape({n, n});
            for (std::size_t t = 0; t < n; ++t)
                for (std::size_t i = 0; i < n; ++i) m(t, i) = i < t;  // off by one: i < t
            return m;
        }();
        const auto leaks = causal_mask_errors(shifted), hides = causal_mask_errors(strict);
        std::cout << "\nOff by one, and the exact cells a test points at:\n";
        std::cout << "  keep i <= t + 1: " << leaks.size() << " wrong cells, e.g. " << leaks.front() << "\n";
        std::cout << "  keep i < t:      " << hides.size() << " wrong cells, e.g. " << hides.front() << "\n";
        // The combined mask against its definition, cell by cell: key i is readable from query t when i ≤ t and i is
        // a real token.
        std::size_t combined_wrong = 0;
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t i = 0; i < n; ++i) {
                const bool real = left_pad ? i >= static_cast<std::size_t>(pad) : i < n - static_cast<std::size_t>(pad);
                combined_wrong += combined(t, i) != (i <= t && real);
            }
        const std::size_t convention_wrong = causal_mask_errors(blocked_reading).size();
        claims.add("C19", "opposite conventions, padding with causal, off-by-one cells", "a test points at the exact cells",
                   "the other convention read as this one: " + std::to_string(convention_wrong) + " of " + std::to_string(n * n) +
                       " cells wrong; causal and padding combined: " + std::to_string(combined_wrong) + " cells wrong; " +
                       std::to_string(leaks.size()) + " leaking and " + std::to_string(hides.size()) + " hiding cells found",
                   agrees_if(causal_mask_errors(keep).empty() && convention_wrong == n * n && combined_wrong == 0 &&
                             leaks.size() == n - 1 && hides.size() == n && leaks.front() == "(0, 1) leaks the next token" &&
                             hides.front() == "(0, 0) hides the current token"));

        // --- T predictions in one pass (C20) ------------------------------------------------------------
        const ModelConfig config{.vocab = 16, .max_T = n, .d_model = 16, .n_heads = 2, .d_ff = 32};
        reference::Model model(config, seed);  // the model as common/reference/ writes it
        std::vector<int> tokens(n), targets(n, -1);
        for (auto& tok : tokens) tok = static_cast<int>(rng.below(16));
        targets[0] = 0;
        model.forward(tokens, targets, 1, n);
        const Mat base = model.logits();  // (T, V)
        std::cout << "\nOne forward pass, " << n << " predictions: change the tokens after t and compare the outputs\n";
        std::cout << "     t   outputs <= t: bytes changed   outputs > t: max |diff|\n";
        bool all_identical = true, later_change = true;
        for (std::size_t t = 0; t + 1 < n; ++t) {
            std::vector<int> changed = tokens;
            for (std::size_t i = t + 1; i < n; ++i) changed[i] = (changed[i] + 1 + static_cast<int>(i)) % 16;
            model.forward(changed, targets, 1, n);
            const Mat& now = model.logits();
            const std::size_t prefix_bytes = (t + 1) * now.shape(1) * sizeof(float);
            const bool same = std::memcmp(base.data(), now.data(), prefix_bytes) == 0;
            double later = 0;
            for (std::size_t i = (t + 1) * now.shape(1); i < now.size(); ++i)
                later = std::max(later, static_cast<double>(std::fabs(base.data()[i] - now.data()[i])));
            all_identical = all_identical && same;
            later_change = later_change && later > 0;
            std::cout << "  " << std::string(4 - std::to_string(t).size(), ' ') << t << "   "
                      << (same ? "none (bit-identical)" : "SOME") << "          " << fmt_sci(later) << "\n";
        }
        claims.add("C20", "changing tokens after t leaves outputs <= t bit-identical", "bit-identical",
                   all_identical ? "bit-identical at every t" : "some prefix changed", agrees_if(all_identical && later_change));

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            auto as_mat = [](const Mask& m) { return Mat(xt::cast<float>(m)); };
            compare_mine(std::cout, "exercise 6.1 causal_mask(T)", [&] { return as_mat(ex::causal_mask(n)); }, as_mat(keep), 0);
            compare_mine(std::cout, "exercise 6.2 causal_padding_mask(T, valid)",
                         [&] { return as_mat(ex::causal_padding_mask(n, n - static_cast<std::size_t>(pad))); },
                         as_mat(mask_and(keep, padding_mask(n, n - static_cast<std::size_t>(pad)))), 0);
            compare_mine(std::cout, "exercise 6.3 masked_softmax_row, the worked row",
                         [&] { return ex::masked_softmax_row(Vec(xt::row(s, 0)), {true, true, false}); }, w_before, 1e-6);
        }
        claims.print(std::cout);
    });
}
