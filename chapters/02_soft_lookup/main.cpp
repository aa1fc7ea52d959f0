// Section 9.1, Definition 9.1 — attention as a soft lookup.
//
// A dictionary returns the value whose key matches the query exactly. Attention compares the query
// with every key, turns the similarities into positive weights that sum to 1, and returns the weighted
// average of the values. Example 9.1 step by step; the same example with its key–value pairs permuted;
// and the worked row of the companion text "Đọc một ma trận attention nhỏ bằng phép tính cụ thể"
// (reading a small attention matrix by hand), which starts after the scores are scaled.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>

#include "02_soft_lookup/soft_lookup.hpp"
#include "math/attention.hpp"
#include "math/averaging.hpp"
#include "math/stats.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

using namespace attn;

int main(int argc, char** argv) {
    bool mine = false;
    std::string svg_path = "02_soft_lookup.svg";
    Cli cli("02_soft_lookup", "Section 9.1 — Attention as a soft lookup (Attention như phép tra cứu mềm), Definition 9.1");
    cli.add_output("--svg", svg_path, "where to write the heatmap of the permuted weights");
    cli.add_switch("--mine", mine, "also run your exercises 2.1-2.3 on these examples");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        std::cout << "Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V\n\n";

        // --- Example 9.1 (C01) -----------------------------------------------------------------------
        const Mat q = {{1, 0}};                       // (1, d_k)
        const Mat k = {{1, 0}, {0, 1}, {1, 1}};       // (3, d_k)
        const Mat v = {{1, 0}, {0, 1}, {2, 2}};       // (3, d_v)
        const AttentionSteps ex91 = attention(q, k, v);
        std::cout << "Example 9.1: q = " << fmt_vec(Vec(xt::row(q, 0)), 0) << ", d_k = " << k.shape(1) << "\n";
        Table steps(std::cout, {{"j", 4}, {"key", 9}, {"value", 9}, {"score q.k", 12, 3}, {"/ sqrt(d_k)", 13, 3}, {"weight", 9, 3}}, "  ");
        steps.header();
        for (std::size_t j = 0; j < k.shape(0); ++j) {
            const auto jj = static_cast<std::ptrdiff_t>(j);
            steps.row({j + 1, fmt_vec(Vec(xt::row(k, jj)), 0), fmt_vec(Vec(xt::row(v, jj)), 0), ex91.scores(0, j),
                       ex91.scaled(0, j), ex91.weights(0, j)});
        }
        const Vec w91 = xt::row(ex91.weights, 0), out91 = xt::row(ex91.out, 0);
        std::cout << "  output = " << fmt(w91(0), 3) << " v1 + " << fmt(w91(1), 3) << " v2 + " << fmt(w91(2), 3)
                  << " v3 = " << fmt_vec(out91, 3) << "\n";
        std::cout << "  The query is as similar to key 1 as to key 3, and less similar to key 2.\n\n";

        // --- the same pairs in every order (C02) ------------------------------------------------------
        std::cout << "Permuting the key-value pairs permutes the weights; the output does not move\n";
        Table perms(std::cout, {{"order", 8}, {"weights", 25}, {"output", 18}}, "  ");
        perms.header();
        std::vector<std::size_t> order = {0, 1, 2};
        double worst_output_change = 0;
        Mat all_weights = Mat::from_shape({6, 3});
        std::vector<std::string> order_labels;
        std::size_t row = 0;
        do {
            const AttentionSteps p = attention(q, gather_rows(k, order), gather_rows(v, order));
            const Vec out = xt::row(p.out, 0);
            worst_output_change = std::max(worst_output_change, max_abs_diff(out, out91));
            std::string label;
            for (auto o : order) label += std::to_string(o + 1);
            order_labels.push_back(label);
            xt::row(all_weights, static_cast<std::ptrdiff_t>(row++)) = xt::row(p.weights, 0);
            perms.row({label, fmt_vec(Vec(xt::row(p.weights, 0)), 3), fmt_vec(out, 3)});
        } while (std::next_permutation(order.begin(), order.end()));
        std::cout << "  largest change of the output over all 6 orders: " << fmt_sci(worst_output_change) << "\n\n";

        // --- the worked row: scores 0, ln 2, ln 3 (C03) -----------------------------------------------
        const Mat row_scores = {{0.0f, std::log(2.0f), std::log(3.0f)}};  // (1, 3), already scaled
        const Mat row_values = {{1, 0}, {0, 2}, {3, 1}};                   // (3, 2)
        const AttentionSteps worked = attention_from_scores(row_scores, row_values);
        const Vec row_w = xt::row(worked.weights, 0), row_out = xt::row(worked.out, 0);
        const Vec row_exp = xt::exp(Vec(xt::row(row_scores, 0)));
        std::cout << "A worked row (reading a small attention matrix by hand): scaled scores 0, ln 2, ln 3\n";
        std::cout << "  exp(scores)  " << fmt_vec(row_exp, 3) << ", sum " << fmt(xt::sum(row_exp)(), 3) << "\n";
        std::cout << "  weights      " << fmt_vec(row_w, 4) << " = (" << as_fraction_over(row_w(0), 6) << ", "
                  << as_fraction_over(row_w(1), 6) << ", " << as_fraction_over(row_w(2), 6) << ")\n";
        std::cout << "  values      ";
        for (std::size_t j = 0; j < row_values.shape(0); ++j)
            std::cout << " v" << j + 1 << " = " << fmt_vec(Vec(xt::row(row_values, static_cast<std::ptrdiff_t>(j))), 0);
        std::cout << "\n";
        std::cout << "  output       " << fmt_vec(row_out, 4) << " = (" << as_fraction(row_out(0)) << ", "
                  << as_fraction(row_out(1)) << ")\n";
        const auto largest = std::max_element(row_w.begin(), row_w.end()) - row_w.begin();
        std::cout << "  The largest weight is on v" << largest + 1 << ", but all " << row_w.size() << " values contribute.\n";

        svg::write_file(svg_path, svg::heatmap(all_weights, {"Example 9.1: weights for each order of the pairs",
                                                             order_labels, {"pair 1st", "pair 2nd", "pair 3rd"}}));
        std::cout << "\nwrote " << svg_path << " (the weights of every order as a heatmap)\n";

        if (mine) {
            std::cout << "\nYour exercises on these examples (--mine)\n";
            compare_mine(std::cout, "exercise 2.1 stable_softmax(0, ln 2, ln 3)",
                         [&] { return ex::stable_softmax(Vec(xt::row(row_scores, 0))); }, row_w, 1e-6);
            compare_mine(std::cout, "exercise 2.2 attention_row, Example 9.1",
                         [&] { return ex::attention_row(Vec(xt::row(q, 0)), k, v); }, out91, 1e-5);
            compare_mine(std::cout, "exercise 2.3 attention, Example 9.1", [&] { return ex::attention(q, k, v); },
                         ex91.out, 1e-5);
        }

        ClaimReport claims;
        const Vec chapter_w91 = {0.401f, 0.198f, 0.401f}, chapter_out91 = {1.203f, 1.000f};
        const Vec chapter_scaled = {0.707f, 0.0f, 0.707f};
        auto agree3 = [](const Vec& ours, const Vec& chapter) {
            for (std::size_t i = 0; i < ours.size(); ++i)
                if (!agrees_at(ours(i), chapter(i), 3)) return false;
            return true;
        };
        const Vec scaled91 = xt::row(ex91.scaled, 0);
        claims.add("C01", "Example 9.1: scaled scores, weights, output",
                   fmt_vec(chapter_scaled, 3) + ", " + fmt_vec(chapter_w91, 3) + ", " + fmt_vec(chapter_out91, 3),
                   fmt_vec(scaled91, 3) + ", " + fmt_vec(w91, 3) + ", " + fmt_vec(out91, 3),
                   agrees_if(agree3(scaled91, chapter_scaled) && agree3(w91, chapter_w91) && agree3(out91, chapter_out91)));
        claims.add("C02", "permuting the pairs leaves the output (1.203, 1.000)", "unchanged",
                   "largest change " + fmt_sci(worst_output_change), agrees_if(worst_output_change < 1e-6));
        claims.add("C03", "scores 0, ln 2, ln 3: weights and output", "(1/6, 2/6, 3/6), (5/3, 7/6)",
                   fmt_vec(row_w, 4) + ", " + fmt_vec(row_out, 4),
                   agrees_if(max_abs_diff(row_w, Vec{1.0f / 6, 2.0f / 6, 3.0f / 6}) < 1e-6 &&
                       max_abs_diff(row_out, Vec{5.0f / 3, 7.0f / 6}) < 1e-6));
        claims.print(std::cout);
    });
}
