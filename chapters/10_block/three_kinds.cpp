#include "chapters/10_block/three_kinds.hpp"

#include "math/attention.hpp"
#include "math/softmax.hpp"
#include "report/table.hpp"

namespace attn::sec10 {

void show_three_kinds(std::ostream& os, Rng& rng) {
    const std::size_t T_src = 5, T_tgt = 3, dk = 4;
    const Mat src = rng.normal_mat(T_src, dk), tgt = rng.normal_mat(T_tgt, dk);  // stand-ins for q = k = v projections
    const AttentionSteps encoder = attention(src, src, src);
    const Mask causal = causal_mask(T_tgt);
    const AttentionSteps decoder = attention(tgt, tgt, tgt, &causal);
    const AttentionSteps cross = attention(tgt, src, src);
    os << "Three kinds of attention (Section 9.7), on a source of " << T_src << " tokens and a target of " << T_tgt << ":\n";
    os << "  encoder self-attention, unmasked: q, k, v from the source; weights " << shape_str(encoder.weights) << ", every row sees every token\n";
    print_matrix(os, encoder.weights, 2, "    ");
    os << "  decoder self-attention, causal: q, k, v from the target; weights " << shape_str(decoder.weights) << ", zero above the diagonal\n";
    print_matrix(os, decoder.weights, 2, "    ");
    os << "  cross-attention: q from the target, k and v from the source; weights " << shape_str(cross.weights) << " (T_target x T_source), out "
       << shape_str(cross.out) << "\n";
    print_matrix(os, cross.weights, 2, "    ");
    os << "  A decoder-only model (GPT) keeps only the second kind: one sequence, causal throughout.\n\n";
}

}  // namespace attn::sec10
