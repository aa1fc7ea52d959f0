#include "chapters/10_block/traced_block.hpp"

#include <vector>

#include "core/config.hpp"
#include "core/npy.hpp"
#include "reference/model.hpp"
#include "report/table.hpp"

namespace attn::sec10 {

namespace {
std::string shape_of(const std::vector<std::size_t>& s) {  // "(16, 64)"
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += std::to_string(s[i]) + (i + 1 < s.size() ? ", " : ")");
    return out;
}
}  // namespace

void show_traced_block(std::ostream& os, Rng& rng, std::uint64_t seed, const std::string& dump_dir) {
    const std::size_t B = 2, T = 8, V = 50;
    const ModelConfig small = gpt2_config({.vocab = V, .max_T = T, .d_model = 64, .n_heads = 4, .n_layers = 2});
    reference::Model stack(small, seed);  // the reference engine: its blocks are the chapter's two lines
    std::vector<int> tokens(B * T), targets(B * T);
    for (std::size_t i = 0; i < B * T; ++i) tokens[i] = static_cast<int>(rng.below(V)), targets[i] = static_cast<int>(rng.below(V));
    stack.forward(tokens, targets, B, T);
    os << "A stack of " << small.n_layers << " pre-norm blocks, d_model = " << small.d_model << ", " << small.n_heads << " heads, on B = " << B
       << " sequences of T = " << T << " tokens; block 1 as it ran:\n";
    Table tr(os, {{"tensor", 34}, {"shape", 16}, {"", 1}}, "  ");
    tr.header();
    for (const auto& t : stack.block(0).trace()) tr.row({t.name, shape_of(t.shape), "  " + t.meaning});
    os << "  then block 2 on y, LN_f, and logits = LN_f(y) wte^T: " << shape_of({B * T, V})
       << " — the output layer is the token table read backwards (tied)\n\n";

    if (dump_dir.empty()) return;
    // The block's input (rows of B·T tokens), every weight of block 1, and its output, as .npy.
    Rng dump_rng(seed, 0xd);  // its own stream: --dump leaves every other number printed unchanged
    const Mat x = dump_rng.normal_mat(B * T, small.d_model);  // (B·T, d_model)
    const Mat y = stack.block_forward(0, x, T);                // (B·T, d_model)
    write_npy(dump_dir, "x", x);
    std::size_t files = 2;
    for (const Param& p : stack.params().all())
        if (p.name.rfind("block0.", 0) == 0) write_npy(dump_dir, p.name, p.value), ++files;
    write_npy(dump_dir, "y", y);
    os << "--dump: wrote " << files << " .npy files to " << dump_dir << ": x (" << B * T << ", " << small.d_model << "), B = " << B
       << " sequences of T = " << T << ", the weights of block 1 (block0.*; y = x W + b, W is\n"
       << "  (in, out); LayerNorm eps 1e-5; exact GELU; causal, " << small.n_heads << " heads) and its output y\n\n";
}

}  // namespace attn::sec10
