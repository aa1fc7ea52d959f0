// Section 9.4 — "Mặt nạ": masks.
//
// A mask says which keys a query may read. It is applied before softmax, by setting the blocked scores
// to −∞, so their weights are exactly 0 and the rest renormalise. The causal mask lets one forward
// pass train T next-token predictions at once. Here: the chapter's small examples, what goes wrong when
// the mask is applied after softmax or is off by one, what a fully masked row does, and the proof that
// the causal mask really hides the future: changing later tokens leaves earlier outputs bit-identical.
// The masks and their checks are masks.cpp's, that last proof one_pass.cpp's, each claim's criterion
// claims.cpp's; this file runs the examples in the section's order.
#include <cmath>
#include <iostream>
#include <limits>

#include "06_masking/masking.hpp"
#include "chapters/06_masking/claims.hpp"
#include "chapters/06_masking/masks.hpp"
#include "chapters/06_masking/one_pass.hpp"
#include "core/rng.hpp"
#include "math/attention.hpp"
#include "math/softmax.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

using namespace attn;
using namespace attn::sec06;  // this section's experiments (chapters/06_masking/)

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
    cli.add_output("--svg", svg_path, "where to write the heatmaps of the causal and causal+padding weights");
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
        claims.add(c15_claim(open, causal));

        // --- before softmax, not after (C16) and the weights do not decide the output (C17) ------------
        const Mat s = {{0.0f, std::log(2.0f), std::log(3.0f)}};  // (1, 3): the worked row's scores
        const Mat v = {{1, 0}, {0, 2}, {3, 1}};                   // (3, 2)
        Mask keep_two = Mask::from_shape({1, 3});
        keep_two(0, 0) = keep_two(0, 1) = true, keep_two(0, 2) = false;
        Vec after = xt::row(softmax_rows(s), 0);
        after(2) = 0.0f;  // the wrong way: zero the blocked weight after softmax
        const AttentionSteps masked = attention_from_scores(s, v, &keep_two);
        const MaskedRow before{.weights = xt::row(masked.weights, 0), .out = xt::row(masked.out, 0)};
        const Vec &w_before = before.weights, &out_before = before.out;
        std::cout << "Masking the third key of scores (0, ln 2, ln 3)\n";
        std::cout << "  after softmax (wrong):  weights " << fmt_vec(after, 4) << ", sum " << fmt(xt::sum(after)(), 4) << "\n";
        std::cout << "  before softmax (right): weights " << fmt_vec(w_before, 4) << " = (" << as_fraction(w_before(0))
                  << ", " << as_fraction(w_before(1)) << ", " << as_fraction(w_before(2)) << "), output "
                  << fmt_vec(out_before, 4) << " = (" << as_fraction(out_before(0)) << ", " << as_fraction(out_before(1)) << ")\n";
        claims.add(c16_claim(after, before));

        Mat v20 = v;
        v20(1, 0) = 0, v20(1, 1) = 20;  // replace v2 by (0, 20)
        const AttentionSteps masked20 = attention_from_scores(s, v20, &keep_two);
        const MaskedRow swapped{.weights = xt::row(masked20.weights, 0), .out = xt::row(masked20.out, 0)};
        std::cout << "  v2 = (0, 20) instead:   weights " << fmt_vec(swapped.weights, 4) << " (unchanged), output "
                  << fmt_vec(swapped.out, 4) << " = (" << as_fraction(swapped.out(0)) << ", " << as_fraction(swapped.out(1)) << ")\n";
        std::cout << "  The weights alone do not say what the output is: the values do.\n\n";
        claims.add(c17_claim(before, swapped));

        // --- a fully masked row (C18) --------------------------------------------------------------------
        const float inf = std::numeric_limits<float>::infinity();
        const Vec all_blocked = {-inf, -inf, -inf};
        const FullyMaskedRow blocked{.naive = naive_softmax(all_blocked),
                                     .big_negative = softmax(Vec{-1e9f, -1e9f, -1e9f}),
                                     .policy = fully_masked_error()};
        std::cout << "A row with every key blocked\n";
        std::cout << "  softmax over (-inf, -inf, -inf), computed as usual (s - max, exp, /sum): " << fmt_vec(blocked.naive, 3) << "\n";
        std::cout << "  with -1e9 instead of -inf:                                               " << fmt_vec(blocked.big_negative, 3)
                  << "  (a uniform row over keys it must not read)\n";
        std::cout << "  this library's policy (an error, as the chapter's scalar reference): " << blocked.policy << "\n\n";
        claims.add(c18_claim(blocked));

        // --- conventions, padding, and the off-by-one (C19) ---------------------------------------------
        const std::size_t n = static_cast<std::size_t>(T), n_pad = static_cast<std::size_t>(pad);
        const Mask keep = causal_mask(n);
        std::cout << "The causal mask for T = " << n << " (1 = may read; rows are queries, columns keys)\n";
        print_mask(std::cout, keep);
        const Mask blocked_reading = invert(keep);
        std::cout << "  The same policy in the \"true = blocked\" convention is its complement: reading one as the\n"
                  << "  other lets every query see only the future — " << causal_mask_errors(blocked_reading).size()
                  << " of " << n * n << " cells wrong.\n";
        const Mask padding = left_pad ? left_padding_mask(n, n_pad) : padding_mask(n, n - n_pad);
        const Mask combined = mask_and(keep, padding);
        std::cout << "\nCausal and padding (" << pad << " padding positions " << (left_pad ? "first" : "last") << "), combined:\n";
        print_mask(std::cout, combined);
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

        const MaskCells cells{.T = n,
                              .causal_wrong = causal_mask_errors(keep).size(),
                              .convention_wrong = causal_mask_errors(blocked_reading).size(),
                              .combined_wrong = causal_padding_errors(combined, {.pad = n_pad, .first = left_pad}),
                              .leaks = causal_mask_errors(off_by_one_mask(n, OffByOne::keeps_next)),
                              .hides = causal_mask_errors(off_by_one_mask(n, OffByOne::drops_current))};
        std::cout << "\nOff by one, and the exact cells a test points at:\n";
        std::cout << "  keep i <= t + 1: " << cells.leaks.size() << " wrong cells, e.g. " << cells.leaks.front() << "\n";
        std::cout << "  keep i < t:      " << cells.hides.size() << " wrong cells, e.g. " << cells.hides.front() << "\n";
        claims.add(c19_claim(cells));

        // --- T predictions in one pass (C20) ------------------------------------------------------------
        claims.add(c20_claim(one_pass_test(std::cout, n, seed, rng)));

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            auto as_mat = [](const Mask& m) { return Mat(xt::cast<float>(m)); };
            compare_mine(std::cout, "exercise 6.1 causal_mask(T)", [&] { return as_mat(ex::causal_mask(n)); }, as_mat(keep), 0);
            compare_mine(std::cout, "exercise 6.2 causal_padding_mask(T, valid)",
                         [&] { return as_mat(ex::causal_padding_mask(n, n - n_pad)); }, as_mat(mask_and(keep, padding_mask(n, n - n_pad))), 0);
            compare_mine(std::cout, "exercise 6.3 masked_softmax_row, the worked row",
                         [&] { return ex::masked_softmax_row(Vec(xt::row(s, 0)), {true, true, false}); }, w_before, 1e-6);
        }
        claims.print(std::cout);
    });
}
