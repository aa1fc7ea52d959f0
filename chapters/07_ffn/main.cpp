// Section 9.5 — the feed-forward network of a Transformer block (Cấu trúc một khối Transformer).
//
// FFN(x) = W_2 φ(W_1 x + b_1) + b_2, applied to each position on its own, with d_ff = 4d and φ = GELU.
// Two facts the chapter draws from the block's table: the FFN holds two thirds of a block's weights,
// and attention is the only sub-layer that mixes positions — without it, each token's output comes
// from that token alone.
#include <cmath>
#include <cstring>
#include <iostream>

#include "07_ffn/ffn.hpp"
#include "core/rng.hpp"
#include "math/stats.hpp"
#include "reference/layers.hpp"
#include "reference/matmul.hpp"
#include "reference/model.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

using namespace attn;

namespace {
// Parameters of a model's attention (W_q, W_k, W_v, W_o) and of its FFN (W_1, b_1, W_2, b_2).
std::pair<std::size_t, std::size_t> block_params(reference::Model& m) {
    return {m.params().count({"block0.W_q", "block0.W_k", "block0.W_v", "block0.W_o"}), m.params().count({"block0.W_1", "block0.b_1", "block0.W_2", "block0.b_2"})};
}
}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    bool mine = false;
    std::string svg_path = "07_ffn.svg";
    Cli cli("07_ffn", "Section 9.5 — The feed-forward network (Cấu trúc một khối Transformer)");
    cli.add("--seed", seed, "random seed");
    cli.add_output("--svg", svg_path, "where to write GELU, its tanh approximation and ReLU");
    cli.add_switch("--mine", mine, "also run your exercises 7.1-7.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        ClaimReport claims;

        // --- GELU, exact and tanh ---------------------------------------------------------------------------
        const std::size_t n = 1201;
        Mat xs = Mat::from_shape({1, n});
        for (std::size_t i = 0; i < n; ++i) xs(0, i) = -6.0f + 12.0f * static_cast<float>(i) / (n - 1);
        const Mat exact = reference::gelu(xs), approx = reference::gelu_tanh(xs);
        std::size_t worst = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (std::fabs(exact(0, i) - approx(0, i)) > std::fabs(exact(0, worst) - approx(0, worst))) worst = i;
        std::cout << "GELU(x) = x Phi(x), and GPT-2's tanh approximation, on [-6, 6]:\n";
        std::cout << "  GELU(-1), GELU(0), GELU(1) = " << fmt(exact(0, 500), 4) << ", " << fmt(exact(0, 600), 4) << ", " << fmt(exact(0, 700), 4)
                  << "; largest |exact - tanh| = " << fmt_sci(std::fabs(exact(0, worst) - approx(0, worst))) << " at x = " << fmt(xs(0, worst), 2) << "\n";
        svg::Series se{"GELU (exact)", {}, {}, "#1f77b4"}, st{"GELU (tanh)", {}, {}, "#ff7f0e", true}, sr{"ReLU", {}, {}, "#999999", true};
        for (std::size_t i = 200; i <= 1000; i += 10) {
            se.x.push_back(xs(0, i)), se.y.push_back(exact(0, i));
            st.x.push_back(xs(0, i)), st.y.push_back(approx(0, i));
            sr.x.push_back(xs(0, i)), sr.y.push_back(std::max(0.0f, xs(0, i)));
        }
        svg::write_file(svg_path, svg::line_plot({se, st, sr}, {"GELU and ReLU", "x", "phi(x)"}));

        // --- two thirds of a block (C21) ---------------------------------------------------------------------
        std::cout << "\nParameters of one block, counted from a model's tensors (d_ff = 4d; no biases on W_q…W_o here)\n";
        Table t(std::cout, {{"d", 6, 0}, {"attention", 13, 0}, {"FFN", 13, 0}, {"FFN share", 11, 4}}, "  ");
        t.header();
        double share768 = 0;
        for (std::size_t d : {64u, 128u, 512u, 768u}) {
            reference::Model m({.vocab = 2, .max_T = 2, .d_model = d, .n_heads = 1, .d_ff = 4 * d, .positions = Positions::none}, 0);
            const auto [att, ffn] = block_params(m);
            const double share = static_cast<double>(ffn) / static_cast<double>(att + ffn);
            if (d == 768) share768 = share;
            t.row({d, att, ffn, share});
        }
        std::cout << "  attention: 4 d^2 (W_q, W_k, W_v, W_o); FFN: 8 d^2 + 5 d (W_1, W_2 and their biases) — two thirds.\n";
        // --- attention is the only mixer --------------------------------------------------------------------
        Rng rng(seed);
        const std::size_t T = 8, V = 20;
        reference::Model no_attention({.vocab = V, .max_T = T, .d_model = 16, .n_heads = 1, .mixer = Mixer::none, .d_ff = 64, .positions = Positions::none}, seed);
        std::vector<int> tokens(T), targets(T, -1);
        for (auto& tok : tokens) tok = static_cast<int>(rng.below(V));
        targets[0] = 0;
        no_attention.forward(tokens, targets, 1, T);
        const Mat before = no_attention.logits();
        std::vector<int> changed = tokens;
        changed[3] = (changed[3] + 1) % static_cast<int>(V);
        no_attention.forward(changed, targets, 1, T);
        const Mat& after = no_attention.logits();
        std::size_t rows_changed = 0;
        for (std::size_t r = 0; r < T; ++r)
            rows_changed += std::memcmp(&before(r, 0), &after(r, 0), V * sizeof(float)) != 0;
        std::cout << "\nA block without attention (embeddings, FFN, readout), tokens (";
        for (std::size_t i = 0; i < T; ++i) std::cout << tokens[i] << (i + 1 < T ? " " : ")");
        std::cout << "; change token 3 from " << tokens[3] << " to " << changed[3] << ":\n"
                  << "  outputs that changed: " << rows_changed << " of " << T << " (position 3's); every other row is bit-identical.\n"
                  << "  Without attention a Transformer is an MLP applied to each token on its own.\n";
        claims.add("C21", "the FFN holds two thirds of a block; only attention mixes positions",
                   "2/3; a block without attention acts on each token separately",
                   fmt(share768, 4) + " at d = 768; " + std::to_string(rows_changed) + " of " + std::to_string(T) + " outputs changed",
                   agrees_if(std::fabs(share768 - 2.0 / 3) < 0.01 && rows_changed == 1));
        std::cout << "\nwrote " << svg_path << " (GELU, its tanh approximation, ReLU)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 7.1 gelu on [-6, 6]", [&] { return ex::gelu(xs); }, exact, 1e-5);
            compare_mine(std::cout, "exercise 7.2 gelu_tanh on [-6, 6]", [&] { return ex::gelu_tanh(xs); }, approx, 1e-5);
            Parameters p;
            Param& w1 = p.normal("W_1", 4, 16, 0.5f, rng);
            Param& b1 = p.normal("b_1", 1, 16, 0.5f, rng);
            Param& w2 = p.normal("W_2", 16, 4, 0.5f, rng);
            Param& b2 = p.normal("b_2", 1, 4, 0.5f, rng);
            const Mat x = rng.normal_mat(3, 4);
            const Mat ref = reference::matmul(reference::gelu(reference::matmul(x, w1.value) + b1.value), w2.value) + b2.value;  // (3, 4)
            compare_mine(std::cout, "exercise 7.3 ffn_forward", [&] { return ex::ffn_forward(x, w1.value, b1.value, w2.value, b2.value); }, ref, 1e-4);
        }
        claims.print(std::cout);
    });
}
