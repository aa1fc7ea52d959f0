#include "chapters/05_multi_head/sublayer.hpp"

#include <algorithm>
#include <chrono>

#include "core/blas.hpp"
#include "core/heads.hpp"
#include "core/params.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "reference/attention.hpp"
#include "reference/matmul.hpp"
#include "reference/model.hpp"
#include "report/table.hpp"

namespace attn::sec05 {

std::size_t attention_params(std::size_t d_model, std::size_t n_heads) {
    reference::Model model({.vocab = 1, .max_T = 1, .d_model = d_model, .n_heads = n_heads, .positions = Positions::none}, 0);
    return model.params().count({"block0.W_q", "block0.W_k", "block0.W_v", "block0.W_o"});
}

Tensor3 per_head_scores(const Mat& q, const Mat& k, std::size_t n_heads) {
    const std::size_t T = q.shape(0);
    const Tensor3 q_heads = split_heads(q, 1, T, n_heads), k_heads = split_heads(k, 1, T, n_heads);  // (h, T, d_k)
    Tensor3 scores = Tensor3::from_shape({n_heads, T, T});                                              // (h, T, T)
    for (std::size_t h = 0; h < n_heads; ++h)
        xt::view(scores, h) = reference::matmul(Mat(xt::view(q_heads, h)), reference::transposed(Mat(xt::view(k_heads, h))));
    return scores;
}

double forward_vs_divisor(const Mat& x, std::size_t n_heads, double divisor, std::uint64_t seed) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    Parameters p;
    Rng rng(seed, 13);
    reference::SelfAttention attention(p, "", {.d_model = d, .n_heads = n_heads, .causal = false}, Init::fan_in, rng);
    attention.forward(x, T);  // one sequence: weights() is (h, T, T)
    const Mat q = reference::matmul(x, p["W_q"].value), k = reference::matmul(x, p["W_k"].value);  // (T, d), by hand
    const Tensor3 scores = per_head_scores(q, k, n_heads);                                             // (h, T, T)
    double worst = 0;
    for (std::size_t h = 0; h < n_heads; ++h) {
        const Mat by_hand = softmax_rows(Mat(xt::view(scores, h)) / static_cast<float>(divisor));
        worst = std::max(worst, max_abs_diff(Mat(xt::view(attention.weights(), h)), by_hand));
    }
    return worst;
}

double attention_ms(const Mat& x, std::size_t n_heads, Rng& rng, int reps) {
    Parameters p;
    const std::size_t T = x.shape(0);
    reference::SelfAttention attention(p, "", {.d_model = x.shape(1), .n_heads = n_heads}, Init::fan_in, rng);  // causal
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const Mat out = attention.forward(x, T);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        if (out.size() == 0) return 0;
    }
    return best;
}

void print_cost_table(std::ostream& os, const Mat& x, Rng& rng) {
    blas_on_one_thread();  // every product on one thread, so that h small products and one big one compare fairly
    os << "\nOne causal attention sub-layer forward, T = " << x.shape(0) << ", d_model = " << x.shape(1) << " (best of 5, one thread, this machine)\n";
    Table tt(os, {{"heads", 7, 0}, {"ms", 10, 2}, {"vs 1 head", 11, 2}}, "  ");
    tt.header();
    const double one = attention_ms(x, 1, rng, 5);
    for (std::size_t nh : {1u, 2u, 4u, 8u}) {
        const double ms = nh == 1 ? one : attention_ms(x, nh, rng, 5);
        tt.row({nh, ms, ms / one});
    }
    os << "  The products cost the same for every h (2 T^2 d for q k^T and for w v); what grows is the\n"
       << "  softmax, h rows of T scores per position instead of one.\n";
}

}  // namespace attn::sec05
