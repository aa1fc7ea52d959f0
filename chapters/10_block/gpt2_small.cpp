#include "chapters/10_block/gpt2_small.hpp"

#include <string_view>

#include "reference/model.hpp"
#include "report/table.hpp"

namespace attn::sec10 {

namespace {
constexpr std::size_t kLayers = 12, kWidth = 768;
}  // namespace

Gpt2Count count_gpt2_small() {
    const ModelConfig gpt2 = gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = kWidth, .n_heads = 12, .n_layers = kLayers});
    reference::Model model(gpt2, 0, reference::Weights::shapes_only);  // its tensors at their shapes, no weights drawn
    Parameters& p = model.params();
    std::size_t block0 = 0;  // every scalar of the first block: the parameters named block0.*
    for (const Param& q : p.all())
        if (std::string_view(q.name).starts_with("block0.")) block0 += q.value.size();
    return {.block = block0,
            .wte = p["wte"].value.size(),
            .wpe = p["wpe"].value.size(),
            .lnf = p.count({"lnf.gain", "lnf.bias"}),
            .total = p.count(),
            .three_biases = p.count({"block0.b_q", "block0.b_k", "block0.b_v"})};
}

void print_gpt2_count(std::ostream& os, const Gpt2Count& c) {
    auto count = [](std::size_t n) { return fmt_count(static_cast<long long>(n)); };
    os << "GPT-2 small (d = 768, 12 blocks, vocabulary 50,257, context 1,024, output tied), counted from the\n"
       << "tensors of a model built in memory (at their shapes; no weights drawn):\n";
    Table gt(os, {{"", 22}, {"", 18}, {"", 14}}, "  ");
    gt.row({"token embeddings", "50,257 x 768 =", count(c.wte)});
    gt.row({"position embeddings", " 1,024 x 768 =", count(c.wpe)});
    gt.row({"one block", "", count(c.block)});
    gt.row({"12 blocks", "", count(c.block * kLayers)});
    gt.row({"final LayerNorm", "2 x 768 =", count(c.lnf)});
    gt.row({"total (weights tied)", "", count(c.total)});
    const std::size_t d = kWidth;
    os << "  12 d^2 + 13 d at d = 768 is " << count(12 * d * d + 13 * d) << "; dropping the biases of three of W_q, W_k, W_v, W_o saves "
       << count(c.three_biases) << " per block.\n  The token table is "
       << fmt(100.0 * static_cast<double>(c.wte) / static_cast<double>(c.total), 1)
       << " % of the model: the vocabulary's size is an architectural decision.\n\n";
}

}  // namespace attn::sec10
