// A finite-difference gradient checker (CS231n style): perturb one scalar by ±h, evaluate the loss,
// and compare (L(θ+h) − L(θ−h)) / 2h with the analytic gradient that a backward pass left in grad.
// Per parameter tensor the comparison is the relative error ‖a − n‖ / max(‖a‖, ‖n‖) over the checked
// entries (CS231n): a tensor-level measure, because the forward runs in fp32 and its rounding
// (~1e-7 of the loss, ~1e-5 in a difference quotient at h = 1e-2) would swamp an entry-by-entry ratio
// on the near-zero entries. A correct backward gives ≤ 1e-3 here; a 1 % error in a gradient gives
// ~1e-2 and a wrong formula far more. A tensor whose whole gradient is below what fp32 differences
// can resolve (~4·2^-23·|L|/h per entry) is listed as unresolved instead of compared. (Evaluating the
// loss in double precision would resolve more; the layers are fp32 only.) Every backward in the
// library has a test that runs this.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/params.hpp"

namespace attn {

struct GradCheck {
    double max_rel_error = 0;
    std::string worst;        // the worst tensor, and its entry with the largest |a − n|
    std::size_t checked = 0;  // scalars compared
    std::vector<std::string> unresolved;  // tensors whose gradient is below fp32's resolution (not compared)
};

// `loss` recomputes the loss from the parameters' current values. The analytic gradients must already
// be in params' grad. Checks `per_param` distinct entries of each parameter (all when it has fewer),
// chosen by `seed`.
GradCheck gradcheck(Parameters& params, const std::function<double()>& loss, double h = 1e-2,
                    std::size_t per_param = 64, std::uint64_t seed = 0);

}  // namespace attn
