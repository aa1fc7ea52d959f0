#include "chapters/08_normalization/gradient_table.hpp"

#include "chapters/08_normalization/claims.hpp"
#include "core/side_by_side.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

namespace attn::sec08 {

std::vector<InitGradients> print_init_gradients(std::ostream& os, const ModelSize& stack, const std::vector<int>& data,
                                                const InitSample& sample, const std::string& svg_path) {
    const std::size_t layers = stack.n_layers;
    const std::uint64_t seed = sample.seed;
    os << "Gradient norm per block at initialisation, before any step (L2 norm of each block's parameter\n"
       << "gradients; mean of " << sample.models << " models, seeds " << seed << " ... " << seed + static_cast<std::uint64_t>(sample.models) - 1
       << "), under PyTorch's default initialisation (the chapter's) and GPT-2's N(0, 0.02^2)\n";
    Table gt(os, {{"init", 9}, {"", 10}, {"block 1", 9, 4}, {"block " + std::to_string(layers), 10, 4}, {"last/first", 11, 2},
                  {"| per model: mean", 18, 2}, {"sd", 6, 2}, {"min", 6, 2}, {"max", 6, 2}}, "  ");
    gt.header();
    std::vector<svg::Series> gcurves;
    std::vector<InitGradients> profile(2);  // PyTorch's init, GPT-2's
    // The four cases side by side on the cores (the same bits as one after the other), then their rows.
    side_by_side(4, [&](std::size_t job) {
        const std::size_t i = job / 2;
        const Norm norm = job % 2 == 0 ? Norm::pre : Norm::post;
        (norm == Norm::pre ? profile[i].pre : profile[i].post) = init_gradient_profile(
            norm_stack(stack, norm, i == 0 ? Init::pytorch : Init::gpt2), data, sample.batch, stack.max_T, seed, sample.models);
    });
    const char* colours[2][2] = {{"#1f77b4", "#d62728"}, {"#17becf", "#ff7f0e"}};
    for (int i = 0; i < 2; ++i)
        for (Norm norm : {Norm::pre, Norm::post}) {
            const bool pre = norm == Norm::pre;
            const GradientProfile& g = pre ? profile[i].pre : profile[i].post;
            gt.row({i == 0 ? "PyTorch" : "GPT-2", pre ? "pre-norm" : "post-norm", g.per_block.front(), g.per_block.back(), g.ratio,
                    g.model_ratio.mean, g.model_ratio.std, g.model_ratio.min, g.model_ratio.max});
            svg::Series c{std::string(pre ? "pre-norm" : "post-norm") + (i == 0 ? ", PyTorch init" : ", GPT-2 init"), {}, {}, colours[i][pre ? 0 : 1]};
            for (std::size_t l = 0; l < layers; ++l) c.x.push_back(static_cast<double>(l + 1)), c.y.push_back(g.per_block[l]);
            gcurves.push_back(c);
        }
    namespace c95 = chapter95;
    gt.row({"chapter", "pre-norm", c95::kPreBlock1, c95::kPreBlock12, c95::kPreRatio, "(one model)", "", "", ""});
    gt.row({"chapter", "post-norm", c95::kPostBlock1, c95::kPostBlock12, c95::kPostRatio, "", "", "", ""});
    svg::write_file(svg_path, svg::line_plot(gcurves, {"Gradient norm per block at initialisation", "block", "L2 norm of the block's gradient"}));
    os << "  The chapter's gradients rise from block 1 to block " << layers << ", post-norm's more (Xiong et al.: the LayerNorm\n"
       << "  on the residual path rescales what flows back through every block). Ours, at either initialisation:\n"
       << "  last/first " << fmt(profile[0].pre.ratio, 2) << " and " << fmt(profile[0].post.ratio, 2) << " (PyTorch), "
       << fmt(profile[1].pre.ratio, 2) << " and " << fmt(profile[1].post.ratio, 2) << " (GPT-2).\n\n";
    return profile;
}

}  // namespace attn::sec08
