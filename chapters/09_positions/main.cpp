// Section 9.6 — "Mã hoá vị trí": positional encoding.
//
// Self-attention has no notion of order: without positions, permuting the tokens permutes the outputs
// and changes nothing else, so "the dog bit the man" and "the man bit the dog" give one set of vectors.
// Position must be put in: added to the embeddings (the sinusoidal table of the 2017 paper, or a learned
// table, which stops at its last row), or put into the scores — RoPE rotates q and k so that a score
// depends only on the distance t − i, ALiBi subtracts a per-head multiple of that distance.
#include <algorithm>
#include <cmath>
#include <iostream>

#include <xtensor-blas/xlinalg.hpp>

#include "09_positions/positions.hpp"
#include "core/rng.hpp"
#include "math/attention.hpp"
#include "math/averaging.hpp"
#include "math/positions.hpp"
#include "math/stats.hpp"
#include "reference/model.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

using namespace attn;

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int T = 64, d = 64;
    bool mine = false;
    std::string svg_path = "09_positions.svg";
    Cli cli("09_positions", "Section 9.6 — Positional encoding (Mã hoá vị trí)");
    cli.add("--seed", seed, "random seed");
    cli.add("--T", T, "positions in the tables and the RoPE sweep; the SVG draws all T x d cells", 8, 4096);
    cli.add("--d", d, "width, even: sin and cos, and RoPE's rotations, fill pairs of columns", 2, 1024);
    cli.add_output("--svg", svg_path, "where to write the sinusoidal table (and _rope.svg: RoPE score against offset)");
    cli.add_switch("--mine", mine, "also run your exercises 9.1-9.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        const std::size_t n = static_cast<std::size_t>(T), w = static_cast<std::size_t>(d);
        Rng rng(seed);
        ClaimReport claims;

        // --- no positions: permutation-equivariant (C25) -------------------------------------------------
        const std::size_t Ts = 6;
        const Mat x = rng.normal_mat(Ts, w);  // (6, d) six token embeddings
        const Mat wq = rng.normal_mat(w, w) / std::sqrt(static_cast<float>(w)), wk = rng.normal_mat(w, w) / std::sqrt(static_cast<float>(w));
        const Mat wv = rng.normal_mat(w, w) / std::sqrt(static_cast<float>(w));
        auto self_attention = [&](const Mat& in) { return attention(xt::linalg::dot(in, wq), xt::linalg::dot(in, wk), xt::linalg::dot(in, wv)).out; };
        const auto perm = rng.permutation(Ts);
        const Mat out = self_attention(x), out_perm = self_attention(gather_rows(x, perm));
        const double equivariant = max_abs_diff(out_perm, gather_rows(out, perm));
        const Mat P = sinusoidal_table(Ts, w);
        const Mat with_pos = self_attention(x + P), with_pos_perm = self_attention(gather_rows(x, perm) + P);
        const double broken = max_abs_diff(with_pos_perm, gather_rows(with_pos, perm));
        std::cout << "Self-attention without a mask, six tokens, shuffled by (";
        for (std::size_t i = 0; i < Ts; ++i) std::cout << perm[i] << (i + 1 < Ts ? ", " : ")\n");
        std::cout << "  without positions: outputs of the shuffled input = the outputs shuffled, max |diff| = " << fmt_sci(equivariant) << "\n";
        std::cout << "  with sinusoidal positions added:                                      max |diff| = " << fmt(broken, 3) << "\n";
        std::cout << (equivariant < 1e-5 ? "  Without positions the model cannot tell \"the dog bit the man\" from \"the man bit the dog\".\n\n"
                                         : "  Without positions the outputs should only be permuted, yet they moved by " + fmt_sci(equivariant) + ".\n\n");
        claims.add("C25", "without positions, permuting the inputs permutes the outputs exactly", "exactly (up to float noise)",
                   fmt_sci(equivariant) + " (with positions: " + fmt(broken, 3) + ")", agrees_if(equivariant < 1e-5 && broken > 0.01));

        // --- the sinusoidal table and its shift property (C26) -------------------------------------------
        const Mat table = sinusoidal_table(n, w);  // (T, d)
        std::cout << "The sinusoidal table p[i][2t] = sin(i / 10000^(2t/d)), p[i][2t+1] = cos(…), d = " << w << "; rows 0-3, first 6 columns:\n";
        print_matrix(std::cout, Mat(xt::view(table, xt::range(0, 4), xt::range(0, std::min<std::size_t>(6, w)))), 3, "    ", 7);
        double worst_shift = 0;
        for (std::size_t k : {1u, 5u, 17u}) {
            const Mat Mk = sinusoidal_shift(k, w);
            for (std::size_t i = 0; i + k < n; ++i) {
                const Vec p_i = xt::row(table, static_cast<std::ptrdiff_t>(i)), p_ik = xt::row(table, static_cast<std::ptrdiff_t>(i + k));
                worst_shift = std::max(worst_shift, max_abs_diff(Vec(xt::linalg::dot(Mk, p_i)), p_ik));
            }
        }
        std::cout << "  p_{i+k} = M_k p_i with M_k block rotations by k·ω_t, for k = 1, 5, 17 and every i: max |diff| = "
                  << fmt_sci(worst_shift) << "\n";
        std::cout << (worst_shift < 1e-5 ? "  M_k does not depend on i: an offset is the same linear map wherever it starts.\n\n"
                                         : "  M_k misses some p_{i+k} by " + fmt_sci(worst_shift) + ": these rotations are not the shift.\n\n");
        claims.add("C26", "p_{i+k} is a fixed linear map (block rotations) of p_i", "p_{i+k} = M_k p_i", "max |diff| " + fmt_sci(worst_shift),
                   agrees_if(worst_shift < 1e-5));
        svg::write_file(svg_path, svg::heatmap(Mat((table + 1.0f) / 2.0f), {"Sinusoidal positions: rows = position, columns = dimension", {}, {}, false}));

        // --- learned absolute positions stop at their last row ---------------------------------------------
        reference::Model learned({.vocab = 8, .max_T = 16, .d_model = 8, .n_heads = 1}, seed);
        std::string refused;
        try {
            learned.forward(std::vector<int>(17, 1), std::vector<int>(17, 1), 1, 17);
        } catch (const Error& e) {
            refused = e.what();
        }
        std::cout << "A learned position table has T_max rows (BERT 512, GPT-2 1,024); past them there is nothing to add:\n"
                  << "  " << refused << "\n\n";

        // --- RoPE: the score depends on t − i only (C27) ---------------------------------------------------
        const Mat qk = rng.normal_mat(2, w);  // one query vector and one key vector, (2, d)
        const Mat q_rows = xt::repeat(xt::view(qk, xt::range(0, 1), xt::all()), n, 0), k_rows = xt::repeat(xt::view(qk, xt::range(1, 2), xt::all()), n, 0);
        const Mat scores = xt::linalg::dot(rope(q_rows), xt::transpose(rope(k_rows)));  // (T, T): the same q and k at every position
        double spread = 0;
        svg::Series by_offset{"q_t . k_i with RoPE", {}, {}, "#1f77b4"};
        for (std::size_t off = 0; off < n; ++off) {
            double lo = 1e30, hi = -1e30;
            for (std::size_t i = 0; i + off < n; ++i) lo = std::min(lo, static_cast<double>(scores(i + off, i))), hi = std::max(hi, static_cast<double>(scores(i + off, i)));
            spread = std::max(spread, hi - lo);
            by_offset.x.push_back(static_cast<double>(off)), by_offset.y.push_back(scores(off, 0));
        }
        std::cout << "RoPE: rotate q and k by angles proportional to their positions; the same q and k placed at every\n"
                  << "pair of positions (t, i): for each offset t - i the scores agree to " << fmt_sci(spread)
                  << " (largest spread over " << n << " offsets)\n";
        std::cout << "  score at offset 0, 1, 2, 8: " << fmt(scores(0, 0), 3) << ", " << fmt(scores(1, 0), 3) << ", " << fmt(scores(2, 0), 3)
                  << ", " << fmt(scores(std::min<std::size_t>(8, n - 1), 0), 3) << "\n\n";
        const std::string rope_svg = svg::sibling(svg_path, "_rope");
        svg::write_file(rope_svg, svg::line_plot({by_offset}, {"RoPE: one query and one key, score against offset t - i", "offset t - i", "score"}));
        // ... and on t − i it does depend: a RoPE that rotated nothing would give one score at every offset.
        const double offset_range = *std::max_element(by_offset.y.begin(), by_offset.y.end()) - *std::min_element(by_offset.y.begin(), by_offset.y.end());
        claims.add("C27", "RoPE makes the score depend only on t − i", "depends on t − i only",
                   "spread per offset " + fmt_sci(spread) + "; across offsets the score ranges over " + fmt(offset_range, 3),
                   agrees_if(spread < 1e-3 && offset_range > 1e-2));

        // --- ALiBi (C28) -----------------------------------------------------------------------------------
        const auto slopes = alibi_slopes(8);
        std::cout << "ALiBi: each head subtracts slope x distance from its scores; the slopes for 8 heads are 2^(-8j/8):\n  ";
        for (double m : slopes) std::cout << "1/" << fmt(1.0 / m, 0) << " ";
        std::cout << "\n  head 1's bias for 5 positions (the causal mask blocks the upper triangle):\n";
        print_matrix(std::cout, alibi_bias(5, slopes.front()), 1, "    ", 5);
        bool geometric = true;
        for (std::size_t j = 1; j < slopes.size(); ++j) geometric = geometric && std::fabs(slopes[j] / slopes[j - 1] - 0.5) < 1e-12;
        claims.add("C28", "ALiBi: a linear distance penalty with head-specific slopes", "slopes 1/2, 1/4, …, 1/256 for 8 heads",
                   "1/" + fmt(1 / slopes.front(), 0) + " … 1/" + fmt(1 / slopes.back(), 0) + ", bias(4, 0) = " + fmt(alibi_bias(5, slopes.front())(4, 0), 1),
                   agrees_if(geometric && slopes.front() == 0.5 && alibi_bias(5, 0.5)(4, 0) == -2.0f));
        std::cout << "\nwrote " << svg_path << " (the sinusoidal table) and " << rope_svg << " (RoPE score against offset)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 9.1 sinusoidal_table(T, d)", [&] { return ex::sinusoidal_table(n, w); }, table, 1e-5);
            compare_mine(std::cout, "exercise 9.2 rope_rotate(q rows, 0)", [&] { return ex::rope_rotate(q_rows, 0); }, rope(q_rows), 1e-4);
            compare_mine(std::cout, "exercise 9.3 alibi_bias(5, 8 heads, head 1)", [&] { return ex::alibi_bias(5, 8, 1); }, alibi_bias(5, slopes.front()), 1e-6);
        }
        claims.print(std::cout);
    });
}
