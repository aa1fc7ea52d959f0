#include "chapters/08_normalization/norm_placement.hpp"

#include <algorithm>
#include <cmath>

#include "attn/corpus.hpp"
#include "attn/error.hpp"
#include "attn/stats.hpp"
#include "attn/rng.hpp"
#include "attn/table.hpp"
#include "reference/model.hpp"

namespace attn::sec08 {

ModelConfig norm_stack(const ModelSize& size, Norm norm, Init init) {
    ModelConfig c = gpt2_config(size);
    c.norm = norm;
    c.head = Head::untied, c.init = init;
    return c;
}

BlockStructure zeroed_block_structure(Norm norm, const Mat& x, std::size_t B, std::size_t T, std::size_t n_heads,
                                      std::uint64_t seed) {
    require(x.shape(0) == B * T, "zeroed_block_structure",
            "x is " + shape_str(x) + " for B·T = " + std::to_string(B) + "·" + std::to_string(T));
    const std::size_t d = x.shape(1);
    ModelConfig c = gpt2_config({.vocab = 2, .max_T = T, .d_model = d, .n_heads = n_heads});
    c.norm = norm;
    reference::Model model(c, seed);  // the engine a learner reads (common/reference/)
    for (const char* name : {"block0.W_o", "block0.b_o", "block0.W_2", "block0.b_2"}) model.params()[name].value.fill(0.0f);
    const Mat y = model.block_forward(0, x, T);  // (B·T, d)
    BlockStructure s;
    s.identity_error = max_abs_diff(y, x);
    s.min_row_std = INFINITY;
    const double width = static_cast<double>(d);
    for (std::size_t r = 0; r < y.shape(0); ++r) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < y.shape(1); ++j) mean += y(r, j);
        mean /= width;
        for (std::size_t j = 0; j < y.shape(1); ++j) var += (y(r, j) - mean) * (y(r, j) - mean);
        const double sd = std::sqrt(var / width);
        s.max_row_mean = std::max(s.max_row_mean, std::fabs(mean));
        s.min_row_std = std::min(s.min_row_std, sd), s.max_row_std = std::max(s.max_row_std, sd);
    }
    return s;
}

GradientProfile init_gradient_profile(const ModelConfig& config, const std::vector<int>& data, std::size_t batch,
                                      std::size_t T, std::uint64_t seed, int seeds) {
    require(seeds > 0 && batch > 0 && config.n_layers > 0, "init_gradient_profile", "seeds, batch and n_layers must be positive");
    GradientProfile p;
    p.per_block.assign(config.n_layers, 0.0);
    std::vector<int> tokens, targets;
    std::vector<double> ratios;
    for (int s = 0; s < seeds; ++s) {
        const std::uint64_t model_seed = seed + static_cast<std::uint64_t>(s);
        reference::Model model(config, model_seed);  // the engine a learner reads (common/reference/)
        Rng rng(model_seed, 0x23);
        sample_windows(data, batch, T, rng, tokens, targets);
        model.params().zero_grad();
        model.forward(tokens, targets, batch, T);
        model.backward();
        for (std::size_t l = 0; l < config.n_layers; ++l) p.per_block[l] += model.block_grad_norm(l) / seeds;
        ratios.push_back(model.block_grad_norm(config.n_layers - 1) / model.block_grad_norm(0));
    }
    p.ratio = p.per_block.back() / p.per_block.front();
    p.model_ratio = spread_of(ratios);
    return p;
}

namespace {
// How far the chapter's one-model ratio is from our mean over the models, in sd of their difference.
double sd_from_chapter(const Spread& ours, double chapter) {
    const double sd = std::max(ours.std * std::sqrt(1.0 + 1.0 / ours.n), 1e-12);
    return (ours.mean - chapter) / sd;
}
// How far post-norm's mean ratio is above pre-norm's, in sd of the difference of the two means.
double post_lead(const InitGradients& g) {
    const Spread &a = g.pre.model_ratio, &b = g.post.model_ratio;
    const double sd = std::max(std::sqrt(a.std * a.std / a.n + b.std * b.std / b.n), 1e-12);
    return (b.mean - a.mean) / sd;
}
std::string ratio_sd(const Spread& s) { return fmt(s.mean, 2) + " ± " + fmt(s.std, 2); }
std::string lead_words(double lead) { return (lead >= 0 ? "leads pre-norm's by " : "trails pre-norm's by ") + fmt(std::fabs(lead), 1) + " sd"; }
}  // namespace

GradientVerdict gradient_verdict(const InitGradients& pytorch, const InitGradients& gpt2) {
    namespace c95 = chapter95;
    auto within = [](const Spread& ours, double chapter) {
        const double sd = ours.std * std::sqrt(1.0 + 1.0 / ours.n);
        return std::fabs(ours.mean - chapter) < c95::kSpreads * sd + c95::kRatioRounding;
    };
    const Spread &pre = pytorch.pre.model_ratio, &post = pytorch.post.model_ratio;
    const double lead_pt = post_lead(pytorch), lead_gpt2 = post_lead(gpt2);
    GradientVerdict v;
    v.verdict = judge({.as_stated = within(pre, c95::kPreRatio) && within(post, c95::kPostRatio),
                       .weaker = lead_pt > c95::kSpreads && lead_gpt2 > c95::kSpreads});
    const std::string figures =
        "PyTorch's init, last/first per model over " + std::to_string(pre.n) + " models: " + ratio_sd(pre) + " pre-norm, " +
        ratio_sd(post) + " post-norm (the chapter's 1.32 and 1.65 are " + fmt(std::fabs(sd_from_chapter(pre, c95::kPreRatio)), 1) +
        " and " + fmt(std::fabs(sd_from_chapter(post, c95::kPostRatio)), 1) + " sd away; " + fmt(c95::kSpreads, 0) +
        " allowed); post-norm's mean " + lead_words(lead_pt) + ", and " + lead_words(lead_gpt2) + " under GPT-2's init (" + ratio_sd(gpt2.pre.model_ratio) + ", " + ratio_sd(gpt2.post.model_ratio) + ")";
    if (v.verdict == Verdict::agrees) v.why = "±" + fmt(c95::kSpreads, 0) + " sd of the chapter's one model against our mean; " + figures;
    else if (v.verdict == Verdict::shape)
        v.why = "only the ordering: post-norm's last/first ratio is above pre-norm's under both initialisations (by " +
                fmt(c95::kSpreads, 0) + "+ sd), not the chapter's figures; " + figures;
    else {
        const bool falls = pre.mean < 1 && post.mean < 1;
        v.why = std::string(falls ? "the gradient falls from block 1 to the last block, where the chapter's rises; " : "") +
                "the chapter's ratios are outside our spread, and post-norm's lead over pre-norm is not clear under both "
                "initialisations: " + figures;
    }
    return v;
}

}  // namespace attn::sec08
