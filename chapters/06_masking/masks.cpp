#include "chapters/06_masking/masks.hpp"

#include <cmath>

#include "attn/error.hpp"

namespace attn::sec06 {

Mask padding_mask(std::size_t T, std::size_t valid) {
    Mask m = Mask::from_shape({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) m(t, i) = i < valid;
    return m;
}

Mask left_padding_mask(std::size_t T, std::size_t pad) {
    Mask m = Mask::from_shape({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) m(t, i) = i >= pad;
    return m;
}

Mask mask_and(const Mask& a, const Mask& b) {
    require(a.shape() == b.shape(), "mask_and", "masks " + shape_str(a) + " and " + shape_str(b) + " differ in shape");
    Mask m = Mask::from_shape(a.shape());
    for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = a.data()[i] && b.data()[i];
    return m;
}

Mask invert(const Mask& m) {
    Mask r = Mask::from_shape(m.shape());
    for (std::size_t i = 0; i < m.size(); ++i) r.data()[i] = !m.data()[i];
    return r;
}

Vec naive_softmax(const Vec& s) {
    float m = -INFINITY;
    for (float x : s) m = std::max(m, x);
    Vec p = Vec::from_shape(s.shape());
    float sum = 0.0f;
    for (std::size_t i = 0; i < s.size(); ++i) sum += (p(i) = std::exp(s(i) - m));  // −∞ − (−∞) = NaN
    for (auto& x : p) x /= sum;
    return p;
}

std::vector<std::string> causal_mask_errors(const Mask& m) {
    require(m.shape(0) == m.shape(1), "causal_mask_errors", "mask " + shape_str(m) + " is not square");
    std::vector<std::string> errors;
    for (std::size_t t = 0; t < m.shape(0); ++t) {
        for (std::size_t i = 0; i < m.shape(1); ++i) {
            const std::string cell = "(" + std::to_string(t) + ", " + std::to_string(i) + ")";
            if (i > t && m(t, i))
                errors.push_back(cell + " leaks " + (i == t + 1 ? std::string("the next token") : "a future token"));
            if (i <= t && !m(t, i))
                errors.push_back(cell + " hides " + (i == t ? std::string("the current token") : "a past token"));
        }
    }
    return errors;
}

}  // namespace attn::sec06
