// A finite-difference gradient checker (CS231n style): perturb one scalar by ±h, evaluate the loss,
// and compare (L(θ+h) − L(θ−h)) / 2h with the analytic gradient that a backward pass left in grad.
// Per parameter tensor the comparison is the relative error ‖a − n‖ / max(‖a‖, ‖n‖) over the checked
// entries (CS231n): a tensor-level measure, because the forward runs in fp32 and its rounding
// (~1e-7 of the loss, ~1e-5 in a difference quotient at h = 1e-2) would swamp an entry-by-entry ratio
// on the near-zero entries. A correct backward gives ~1e-3; a 10 % error gives ~1e-1. Every backward
// in the library has a test that runs this on random shapes.
#pragma once

#include <functional>
#include <string>

#include "attn/params.hpp"

namespace attn {

struct GradCheck {
    double max_rel_error = 0;
    std::string worst;        // the worst tensor, and its entry with the largest |a − n|
    std::size_t checked = 0;  // scalars compared
};

// `loss` recomputes the loss from the parameters' current values. The analytic gradients must already
// be in params' grad. Checks up to `per_param` entries of each parameter (all when it has fewer),
// chosen by `seed`.
GradCheck gradcheck(Parameters& params, const std::function<double()>& loss, double h = 1e-2,
                    std::size_t per_param = 24, std::uint64_t seed = 0);

}  // namespace attn
