// Reference answers for Section 9.4's exercises (see exercises/06_masking/masking.hpp).
#include "06_masking/masking.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace ex {

Mask causal_mask(std::size_t T) {
    Mask keep = Mask::from_shape({T, T});  // (T, T)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) keep(t, i) = i <= t;
    return keep;
}

Mask causal_padding_mask(std::size_t T, std::size_t valid) {
    if (valid > T)
        throw attn::Error("causal_padding_mask: valid = " + std::to_string(valid) + " real tokens of T = " + std::to_string(T) + " positions");
    Mask keep = Mask::from_shape({T, T});  // (T, T)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) keep(t, i) = i <= t && i < valid;
    return keep;
}

Vec masked_softmax_row(const Vec& scores, const std::vector<bool>& keep) {
    if (keep.size() != scores.size())
        throw attn::Error("masked_softmax_row: keep has " + std::to_string(keep.size()) + " entries for scores " +
                          attn::shape_str(scores));
    float m = -std::numeric_limits<float>::infinity();
    bool any = false;
    for (std::size_t i = 0; i < scores.size(); ++i) {
        if (!keep[i]) continue;
        if (std::isnan(scores(i)) || scores(i) == std::numeric_limits<float>::infinity())
            throw attn::Error("masked_softmax_row: the kept score " + std::to_string(i) + " of " + attn::shape_str(scores) + " is not finite");
        if (scores(i) == -std::numeric_limits<float>::infinity()) continue;  // −inf: blocked by its score
        m = std::max(m, scores(i)), any = true;
    }
    if (!any) throw attn::Error("masked_softmax_row: every position of " + attn::shape_str(scores) + " is masked");
    Vec w = xt::zeros<float>(scores.shape());  // (n,)
    float sum = 0.0f;
    for (std::size_t i = 0; i < scores.size(); ++i)
        if (keep[i] && scores(i) != -std::numeric_limits<float>::infinity()) sum += (w(i) = std::exp(scores(i) - m));
    for (auto& x : w) x /= sum;
    return w;
}

}  // namespace ex
