// Section 9.2 — "Phép chia cho √d_k": why the scores are divided by √d_k.
//
// Proposition 9.1: if q and k have independent entries with mean 0 and variance 1, then q·k has mean 0
// and variance d_k. So the scores spread like ±√d_k, softmax of numbers tens apart is nearly one-hot,
// and a nearly one-hot softmax has a Jacobian of nearly zeros: gradients stop. Dividing by √d_k brings
// the variance back to 1 at every width. Each step below is measured, not asserted: the tables are
// scaling_tables.cpp's (the chapter's figures and tolerances, with their reasons, in scaling_tables.hpp), each
// claim's criterion is claims.cpp's; this file prints them in the section's order.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "03_scaling/scaling.hpp"
#include "chapters/03_scaling/claims.hpp"
#include "chapters/03_scaling/scaling_tables.hpp"
#include "core/rng.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

using namespace attn;
using namespace attn::sec03;  // this section's experiments (chapters/03_scaling/)

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    ScalingSizes n;
    int sweep_seeds = 0;
    bool mine = false;
    std::string svg_path = "03_scaling_entropy.svg";
    Cli cli("03_scaling", "Section 9.2 — The division by √d_k (Phép chia cho √d_k)");
    cli.add("--seed", seed, "random seed");
    cli.add("--pairs", n.pairs, "random (q, k) pairs per width for the variance table; its error falls as 1/sqrt(pairs)", 1,
            10'000'000);
    cli.add("--queries", n.queries, "random queries per width for the entropy table; held as one queries x d_k matrix", 1, 100'000);
    cli.add("--keys", n.keys, "keys each query attends over; a softmax over one key has nothing to choose", 2, 1 << 16);
    cli.add("--rows", n.rows, "random rows of scores for the saturation table; held as one rows x keys matrix", 1, 100'000);
    cli.add("--max-d", n.max_d, "largest width; widths are 4, 16, 64, ... up to this", 4, 16384);
    cli.add_output("--svg", svg_path, "where to write the plot of entropy against d_k");
    cli.add("--seeds", sweep_seeds,
            "also measure every figure C06 and C09-C11 check at seeds --seed ... --seed + N - 1 and print its mean, std, "
            "min and max (30 seeds: about half a minute); the claims' tolerances come from this",
            0, 10'000);
    cli.add_switch("--mine", mine, "also run your exercises 3.1-3.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        const std::vector<int> widths = widths_up_to(n.max_d);

        // --- Proposition 9.1, measured (C06) ----------------------------------------------------------
        std::cout << "Proposition 9.1: Var(q.k) = d for iid N(0, 1) entries, measured over " << n.pairs
                  << " random pairs (seed " << seed << ")\n";
        const auto var_rows = variance_table(widths, n.pairs, seed);
        Table vt(std::cout, {{"d", 6, 0}, {"Var(q.k)", 13, 3}, {"std", 12, 3}, {"sqrt(d)", 10, 3}});
        vt.header();
        for (const auto& r : var_rows) vt.row({r.d, r.var, r.std, r.sqrt_d});
        double worst_mean = 0;
        for (const auto& r : var_rows) worst_mean = std::max(worst_mean, std::fabs(r.mean) / r.sqrt_d);
        std::cout << "  mean of q.k: within " << fmt(worst_mean, 3) << " sqrt(d) of 0 at every d\n";

        // --- softmax is sensitive to scale (C07) ------------------------------------------------------
        const Vec s = {0.2f, -0.1f, 0.4f, 0.0f};  // (4,)
        const Vec p = softmax(s), p8 = softmax(Vec(8.0f * s));
        std::cout << "\nSoftmax is sensitive to scale: the same four scores, then eight times larger\n";
        std::cout << "  s                 " << fmt_vec(s, 2) << "\n";
        std::cout << "  softmax(s)        " << fmt_vec(p, 4) << "  rounded " << fmt_vec(p, 2) << "\n";
        std::cout << "  softmax(8 s)      " << fmt_vec(p8, 4) << "  rounded " << fmt_vec(p8, 2)
                  << ", to sum 1 " << fmt_vec(round_preserving_sum(p8, 2), 2) << "\n";
        const std::vector<double> p8_sum1 = round_preserving_sum(p8, 2);
        std::cout << "  (the chapter rounds each row to sum to 1: " << fmt(p8(1), 4) << " shows as " << fmt(p8_sum1[1], 2)
                  << " there, " << fmt(p8(1), 2) << " when rounded alone)\n";

        // --- the softmax Jacobian (C08) ---------------------------------------------------------------
        const Vec p32 = softmax(Vec(32.0f * s));  // scores spread like sqrt(1024) = 32
        std::cout << "\nThe softmax Jacobian dp_i/ds_j = p_i (delta_ij - p_j)\n";
        std::cout << "  a soft row, p = softmax(s) = " << fmt_vec(p, 3) << ":\n";
        const Mat J = softmax_jacobian(p), J32 = softmax_jacobian(p32);
        print_matrix(std::cout, J, 4, "    ", 7);
        std::cout << "  a nearly one-hot row, p = softmax(32 s) = " << fmt_vec(p32, 4) << ":\n";
        print_matrix(std::cout, J32, 4, "    ", 7);
        const double maxJ = xt::amax(xt::abs(J))(), maxJ32 = xt::amax(xt::abs(J32))();
        std::cout << "  largest |entry|: " << fmt(maxJ, 4) << " for the soft row, " << fmt(maxJ32, 4)
                  << " near one-hot — almost no gradient passes\n";

        // --- 4,000 queries vs 64 keys, with and without the division (C09, C10) ------------------------
        std::cout << "\n" << n.queries << " random queries vs " << n.keys << " random keys: attention with and without the division"
                  << " (max entropy ln " << n.keys << " = " << fmt(std::log(n.keys), 3) << ")\n";
        const auto ent_rows = entropy_table(widths, n.queries, n.keys, seed);
        Table et(std::cout, {{"d_k", 6, 0}, {"Var(q.k)", 11, 1}, {"| unscaled: H", 15, 3}, {"max w", 8, 3},
                             {"tokens", 8, 2}, {"| scaled: H", 13, 3}, {"max w", 8, 3}, {"tokens", 8, 2}});
        et.header();
        for (const auto& r : ent_rows) {
            et.row({r.d_k, r.score_var, r.unscaled.entropy, r.unscaled.max_weight, r.unscaled.eff_tokens,
                    r.scaled.entropy, r.scaled.max_weight, r.scaled.eff_tokens});
        }
        std::cout << "  H: mean entropy in nats; max w: mean largest weight; tokens: mean exp(H), the keys a row really averages\n";

        // --- saturation: the Jacobian's trace and frozen rows (C11) ------------------------------------
        std::cout << "\nSaturation over " << n.rows << " random rows of " << n.keys << " scores: the Jacobian's trace "
                  << "sum w_i (1 - w_i), and frozen rows (every w_i (1 - w_i) < "
                  << chapter92::kFrozenThreshold << ")\n";
        const auto sat_rows = saturation_table(widths, n.rows, n.keys, seed);
        Table st(std::cout, {{"d_k", 6, 0}, {"trace unscaled", 16, 3}, {"frozen unscaled", 17, 3},
                             {"trace scaled", 14, 3}, {"frozen scaled", 15, 3}});
        st.header();
        for (const auto& r : sat_rows)
            st.row({r.d_k, r.trace_unscaled, r.frozen_unscaled, r.trace_scaled, r.frozen_scaled});

        svg::Series unscaled{"without / sqrt(d_k)", {}, {}, "#d62728"}, scaled{"with / sqrt(d_k)", {}, {}, "#1f77b4"};
        for (const auto& r : ent_rows) {
            unscaled.x.push_back(r.d_k), unscaled.y.push_back(r.unscaled.entropy);
            scaled.x.push_back(r.d_k), scaled.y.push_back(r.scaled.entropy);
        }
        svg::write_file(svg_path, svg::line_plot({unscaled, scaled},
                                                 {"Attention entropy over " + std::to_string(n.keys) + " keys", "d_k",
                                                  "mean entropy (nats)", true,
                                                  {{std::log(n.keys), "ln " + std::to_string(n.keys) + " (uniform)"}}}));
        std::cout << "\nwrote " << svg_path << " (entropy against d_k, with and without the division)\n";

        if (sweep_seeds > 0) {
            std::cout << "\nThe figures the claims check, over " << sweep_seeds << " seeds (" << seed << " ... "
                      << seed + static_cast<std::uint64_t>(sweep_seeds) - 1 << "), at these sizes\n";
            Table sw(std::cout, {{"claim", 6}, {"figure", 40}, {"mean", 10, 4}, {"std", 10, 4}, {"min", 10, 4}, {"max", 10, 4}}, "  ");
            sw.header();
            for (const SweepFigure& f : seed_sweep(n, seed, sweep_seeds))
                sw.row({f.claim, f.figure, f.spread.mean, f.spread.std, f.spread.min, f.spread.max});
        }

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            Rng rng(seed, 99);
            const Mat q = rng.normal_mat(2000, 64), k = rng.normal_mat(2000, 64);  // (2000, 64) each
            Vec dots = xt::sum(q * k, {1});                                        // (2000,)
            compare_mine(std::cout, "exercise 3.1 score_variance, 2000 pairs at d = 64",
                         [&] { return ex::score_variance(q, k); }, variance_of(dots), 1e-3);
            compare_mine(std::cout, "exercise 3.2 entropy(softmax(8 s))", [&] { return ex::entropy(p8); }, entropy(p8), 1e-6);
            compare_mine(std::cout, "exercise 3.3 softmax_jacobian(softmax(s))", [&] { return ex::softmax_jacobian(p); }, J, 1e-6);
        }

        // --- the claims (criteria: claims.cpp; figures and tolerances: scaling_tables.hpp, namespace chapter92) ---
        ClaimReport claims;
        claims.add(c06_claim(var_rows, n.pairs));
        claims.add(c07_claim(p, p8_sum1));
        claims.add(c08_claim(maxJ, maxJ32));
        add_entropy_claims(claims, ent_rows, n.keys);
        add_saturation_claim(claims, sat_rows, n.keys);
        claims.print(std::cout);
    });
}
