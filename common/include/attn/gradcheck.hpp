// A finite-difference gradient checker (CS231n style): perturb one scalar by ±h, evaluate the loss,
// and compare (L(θ+h) − L(θ−h)) / 2h with the analytic gradient that a backward pass left in grad.
// The comparison is the relative error |a − n| / max(|a|, |n|, floor), where floor = 1e-3 of the
// parameter's largest analytic gradient keeps fp32 noise on near-zero entries from counting as error.
// The model computes in fp32; the loss comes back as double and h is large enough (1e-2 by default)
// that fp32 rounding stays ~1e-5 of a typical gradient. Every backward in the library has a test
// that runs this on random shapes.
#pragma once

#include <functional>
#include <string>

#include "attn/params.hpp"

namespace attn {

struct GradCheck {
    double max_rel_error = 0;
    std::string worst;        // "W_q[3, 1]: analytic 0.1234, numeric 0.1240"
    std::size_t checked = 0;  // scalars compared
};

// `loss` recomputes the loss from the parameters' current values. The analytic gradients must already
// be in params' grad. Checks up to `per_param` entries of each parameter (all when it has fewer),
// chosen by `seed`.
GradCheck gradcheck(Parameters& params, const std::function<double()>& loss, double h = 1e-2,
                    std::size_t per_param = 24, std::uint64_t seed = 0);

}  // namespace attn
