#include "chapters/06_masking/one_pass.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "reference/model.hpp"
#include "report/table.hpp"

namespace attn::sec06 {

OnePass one_pass_test(std::ostream& os, std::size_t T, std::uint64_t seed, Rng& rng) {
    const ModelConfig config{.vocab = 16, .max_T = T, .d_model = 16, .n_heads = 2, .d_ff = 32};
    reference::Model model(config, seed);  // the model as common/reference/ writes it
    std::vector<int> tokens(T), targets(T, -1);
    for (auto& tok : tokens) tok = static_cast<int>(rng.below(16));
    targets[0] = 0;
    model.forward(tokens, targets, 1, T);
    const Mat base = model.logits();  // (T, V)
    os << "\nOne forward pass, " << T << " predictions: change the tokens after t and compare the outputs\n";
    os << "     t   outputs <= t: bytes changed   outputs > t: max |diff|\n";
    OnePass pass;
    for (std::size_t t = 0; t + 1 < T; ++t) {
        std::vector<int> changed = tokens;
        for (std::size_t i = t + 1; i < T; ++i) changed[i] = (changed[i] + 1 + static_cast<int>(i)) % 16;
        model.forward(changed, targets, 1, T);
        const Mat& now = model.logits();  // (T, V)
        const std::size_t prefix_bytes = (t + 1) * now.shape(1) * sizeof(float);
        const bool same = std::memcmp(base.data(), now.data(), prefix_bytes) == 0;
        double later = 0;
        for (std::size_t i = (t + 1) * now.shape(1); i < now.size(); ++i)
            later = std::max(later, static_cast<double>(std::fabs(base.data()[i] - now.data()[i])));
        pass.prefix_identical = pass.prefix_identical && same;
        pass.later_changed = pass.later_changed && later > 0;
        os << "  " << std::string(4 - std::to_string(t).size(), ' ') << t << "   " << (same ? "none (bit-identical)" : "SOME") << "          "
           << fmt_sci(later) << "\n";
    }
    return pass;
}

}  // namespace attn::sec06
