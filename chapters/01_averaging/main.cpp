// Section 9.1, as the chapter's companion text "Attention và khối Transformer, suy ra từ phép trung
// bình" (attention derived from averaging) tells it — averaging the context.
//
// The most obvious function from a variable number of vectors to one vector is their mean. Averaging a
// growing prefix is a loop; it is also a product with a lower-triangular matrix whose rows sum to 1;
// and it is also, exactly, a softmax of a −∞-masked zero matrix. Then the shuffle test: the mean is
// blind to order, so a model whose only view of the context is the mean cannot tell
// "the dog bit the man" from "the man bit the dog".
#include <iostream>
#include <limits>

#include "01_averaging/averaging.hpp"
#include "chapters/01_averaging/shuffle_test.hpp"
#include "chapters/01_averaging/three_ways.hpp"
#include "core/rng.hpp"
#include "math/averaging.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

using namespace attn;
using namespace attn::sec01;  // this section's experiments (chapters/01_averaging/)

int main(int argc, char** argv) {
    int T = 6, d = 8;
    std::uint64_t seed = 0;
    bool mine = false;
    std::string svg_path = "01_averaging.svg";
    Cli cli("01_averaging", "Section 9.1 — Averaging the context (Attention như phép tra cứu mềm: suy ra từ phép trung bình)");
    cli.add("--T", T, "sequence length; A is T x T, and the SVG draws every cell", 1, 4096);
    cli.add("--d", d, "width of each vector; any width shows the same, wider is only slower", 1, 4096);
    cli.add("--seed", seed, "random seed");
    cli.add_output("--svg", svg_path, "where to write the heatmap of A");
    cli.add_switch("--mine", mine, "also run your exercises 1.1-1.3 on this example");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        Rng rng(seed);
        const Mat x = rng.normal_mat(T, d);  // (T, d)
        std::cout << "x: T = " << T << " random vectors of width d = " << d << " (seed " << seed << ")\n\n";

        // --- three ways to average a growing prefix (C04) -------------------------------------------
        const ThreeWays three = average_three_ways(x);
        std::cout << "Averaging a growing prefix three ways\n";
        std::cout << "  loop      y[t] = mean(x[0..t])\n";
        std::cout << "  matmul    y = A @ x,            A lower-triangular, rows sum to 1\n";
        std::cout << "  softmax   y = softmax(S) @ x,   S = 0 on and below the diagonal, -inf above\n\n";
        std::cout << "loop vs matmul   max |diff| = " << fmt_sci(three.loop_vs_matmul) << "\n";
        std::cout << "loop vs softmax  max |diff| = " << fmt_sci(three.loop_vs_softmax) << "\n";
        std::cout << "matmul vs softmax max |diff| = " << fmt_sci(max_abs_diff(three.matmul, three.softmax)) << "\n\n";

        const Mat A = averaging_matrix(T);  // (T, T)
        if (T <= 16) {
            std::cout << "the averaging matrix A (rows sum to 1, upper triangle is zero):\n";
            print_matrix(std::cout, A, 3);
            std::cout << "\nthe scores S whose row softmax is A (the causal mask, before softmax):\n";
            print_matrix(std::cout, causal_zero_scores(T), 1, "  ", 5);
        } else {
            std::cout << "(A and S are " << T << " x " << T << "; they are printed for T <= 16, and drawn in the SVG)\n";
        }

        // --- the shuffle test (C05) --------------------------------------------------------------------
        const auto perm = rng.permutation(T);
        const ShuffleTest shuffle = shuffle_test(x, perm);
        std::cout << "\nShuffle test: the summary at the last position, A[-1] @ x, for x and for x shuffled\n";
        std::cout << "  permutation          (";
        for (std::size_t i = 0; i < perm.size(); ++i) std::cout << perm[i] << (i + 1 < perm.size() ? ", " : ")\n");
        std::cout << "  A[-1] @ x            " << fmt_vec(shuffle.summary, 4) << "\n";
        std::cout << "  A[-1] @ x[perm]      " << fmt_vec(shuffle.shuffled_summary, 4) << "\n";
        std::cout << "  max |diff| = " << fmt_sci(shuffle.max_abs_diff)
                  << "  (floating-point noise from a reordered sum: the same vector)\n";

        // --- the one-number language model is order-blind -------------------------------------------
        // Embed two sentences with one random table; their averaged contexts are the same vector, so any
        // model that reads only the average must predict the same next token after both.
        const Mat embedding = rng.normal_mat(4, d);                       // (vocab, d): the, dog, bit, man
        const Vec dog_bit_man = context_average(gather_rows(embedding, {0, 1, 2, 0, 3}));  // (d,)
        const Vec man_bit_dog = context_average(gather_rows(embedding, {0, 3, 2, 0, 1}));  // (d,)
        std::cout << "\n\"the dog bit the man\" vs \"the man bit the dog\", averaged context:"
                  << "  max |diff| = " << fmt_sci(max_abs_diff(dog_bit_man, man_bit_dog)) << "\n";
        std::cout << "  An averaging model sees the same summary for both: order is lost before any weight is learned.\n";

        svg::write_file(svg_path, svg::heatmap(A, {"The averaging matrix A (T = " + std::to_string(T) + ")", {}, {}, T <= 16}));
        std::cout << "\nwrote " << svg_path << " (a heatmap of A)\n";

        if (mine) {
            std::cout << "\nYour exercises on this example (--mine)\n";
            compare_mine(std::cout, "exercise 1.1 prefix_average(x)", [&] { return ex::prefix_average(x); }, three.loop, 1e-5);
            compare_mine(std::cout, "exercise 1.2 averaging_matrix(T)", [&] { return ex::averaging_matrix(T); }, A, 1e-6);
            compare_mine(std::cout, "exercise 1.3 softmax_rows(causal_scores(T))",
                         [&] { return softmax_rows(ex::causal_scores(T)); }, A, 1e-6);
        }

        ClaimReport claims;
        const double noise = 1e-6;  // "agree to float noise": fp32 sums of O(1) numbers differ by ~1e-7
        claims.add("C04", "loop, matmul and softmax averages agree to float noise", "max |diff| ~6e-08",
                   fmt_sci(three.loop_vs_matmul) + " and " + fmt_sci(three.loop_vs_softmax),
                   agrees_if(three.loop_vs_matmul < noise && three.loop_vs_softmax < noise));
        claims.add("C05", "shuffle test: averaging is order-blind", "max |diff| ~3e-08", fmt_sci(shuffle.max_abs_diff),
                   agrees_if(shuffle.max_abs_diff < noise));
        claims.print(std::cout);
    });
}
