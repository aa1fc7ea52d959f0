#include "chapters/06_masking/masks.hpp"

#include <cmath>

#include "core/error.hpp"
#include "math/softmax.hpp"

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

std::string fully_masked_error() {
    try {
        Mask none = Mask::from_shape({1, 3});
        none.fill(false);
        masked_softmax(Mat(xt::zeros<float>({1, 3})), none);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
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

std::size_t causal_padding_errors(const Mask& combined, Padding padding) {
    require(combined.shape(0) == combined.shape(1), "causal_padding_errors", "mask " + shape_str(combined) + " is not square");
    const std::size_t T = combined.shape(0);
    std::size_t wrong = 0;
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) {
            const bool real = padding.first ? i >= padding.pad : i < T - padding.pad;
            wrong += combined(t, i) != (i <= t && real);
        }
    return wrong;
}

Mask off_by_one_mask(std::size_t T, OffByOne how) {
    Mask m = Mask::from_shape({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i) m(t, i) = how == OffByOne::keeps_next ? i <= t + 1 : i < t;
    return m;
}

void print_mask(std::ostream& os, const Mask& m, const std::string& indent) {
    if (m.shape(0) > 16) {
        os << indent << "(" << m.shape(0) << " x " << m.shape(1) << ": printed for T <= 16)\n";
        return;
    }
    for (std::size_t t = 0; t < m.shape(0); ++t) {
        os << indent;
        for (std::size_t i = 0; i < m.shape(1); ++i) os << (m(t, i) ? " 1" : " .");
        os << "\n";
    }
}

}  // namespace attn::sec06
