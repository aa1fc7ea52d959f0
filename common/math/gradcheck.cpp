#include "math/gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/format.hpp"

namespace attn {

GradCheck gradcheck(Parameters& params, const std::function<double()>& loss, double h, std::size_t per_param,
                    std::uint64_t seed) {
    GradCheck r;
    Rng rng(seed, 0x9c);
    // What fp32 can resolve: the forward rounds the loss by ~2^-23 of its size (a few times over), so a
    // difference quotient carries noise of about 4 · 2^-23 · |L| / h in every entry.
    const double noise = 4 * 0x1.0p-23 * std::max(1.0, std::fabs(loss())) / h;
    for (auto& p : params.all()) {
        const std::size_t n = p.value.size(), cols = p.value.shape(1);
        double diff2 = 0, analytic2 = 0, numeric2 = 0, worst_abs = -1;
        std::string worst_entry;
        // Which entries: all of them, or per_param distinct ones (a partial Fisher–Yates shuffle).
        std::vector<std::size_t> order(n);
        for (std::size_t i = 0; i < n; ++i) order[i] = i;
        for (std::size_t c = 0; c < std::min(n, per_param); ++c) std::swap(order[c], order[c + rng.below(n - c)]);
        for (std::size_t c = 0; c < std::min(n, per_param); ++c) {
            const std::size_t i = order[c];
            float& x = p.value.data()[i];
            const float saved = x;
            x = static_cast<float>(saved + h);
            const double plus = loss();
            x = static_cast<float>(saved - h);
            const double minus = loss();
            x = saved;
            const double numeric = (plus - minus) / (2 * h);
            const double analytic = p.grad.data()[i];
            diff2 += (analytic - numeric) * (analytic - numeric);
            analytic2 += analytic * analytic;
            numeric2 += numeric * numeric;
            ++r.checked;
            if (!std::isfinite(analytic) || !std::isfinite(numeric)) {
                // A NaN or infinite gradient fails outright: in the sums below it would fall out of every comparison.
                r.max_rel_error = std::numeric_limits<double>::infinity();
                r.worst = p.name + "[" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "]: analytic " +
                          fmt_sci(analytic, 4) + ", numeric " + fmt_sci(numeric, 4) + " (not finite)";
                return r;
            }
            if (std::fabs(analytic - numeric) > worst_abs) {
                worst_abs = std::fabs(analytic - numeric);
                worst_entry = p.name + "[" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "]: analytic " +
                              fmt_sci(analytic, 4) + ", numeric " + fmt_sci(numeric, 4);
            }
        }
        const std::size_t k = std::min(n, per_param);
        if (std::max(std::sqrt(analytic2), std::sqrt(numeric2)) < noise * std::sqrt(static_cast<double>(k))) {
            r.unresolved.push_back(p.name);  // a gradient below fp32's resolution: nothing to compare
            continue;
        }
        const double rel = std::sqrt(diff2) / std::max(std::sqrt(analytic2), std::sqrt(numeric2));
        if (rel >= r.max_rel_error) {
            r.max_rel_error = rel;
            r.worst = worst_entry + " (relative error of " + p.name + ": " + fmt_sci(rel, 2) + ")";
        }
    }
    return r;
}

}  // namespace attn
