#include "attn/gradcheck.hpp"

#include <algorithm>
#include <cmath>

#include "attn/table.hpp"

namespace attn {

GradCheck gradcheck(Parameters& params, const std::function<double()>& loss, double h, std::size_t per_param,
                    std::uint64_t seed) {
    GradCheck r;
    Rng rng(seed, 0x9c);
    for (auto& p : params.all()) {
        const std::size_t n = p.value.size();
        const double scale = static_cast<double>(xt::amax(xt::abs(p.grad))());
        const double floor = std::max(1e-3 * scale, 1e-7);
        for (std::size_t c = 0; c < std::min(n, per_param); ++c) {
            const std::size_t i = n <= per_param ? c : static_cast<std::size_t>(rng.below(n));
            float& x = p.value.data()[i];
            const float saved = x;
            x = static_cast<float>(saved + h);
            const double plus = loss();
            x = static_cast<float>(saved - h);
            const double minus = loss();
            x = saved;
            const double numeric = (plus - minus) / (2 * h);
            const double analytic = p.grad.data()[i];
            const double rel = std::fabs(analytic - numeric) / std::max({std::fabs(analytic), std::fabs(numeric), floor});
            ++r.checked;
            if (rel >= r.max_rel_error) {
                r.max_rel_error = rel;
                const std::size_t cols = p.value.shape(1);
                r.worst = p.name + "[" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "]: analytic " +
                          fmt_sci(analytic, 4) + ", numeric " + fmt_sci(numeric, 4);
            }
        }
    }
    return r;
}

}  // namespace attn
