#include "chapters/01_averaging/shuffle_test.hpp"

#include <xtensor-blas/xlinalg.hpp>

#include "core/error.hpp"
#include "math/averaging.hpp"
#include "math/stats.hpp"

namespace attn::sec01 {

Vec context_average(const Mat& x) {
    const std::size_t T = x.shape(0);
    require(T > 0, "context_average", "x " + shape_str(x) + " has no rows");
    const Vec last = xt::row(averaging_matrix(T), static_cast<std::ptrdiff_t>(T - 1));  // (T,)
    return xt::linalg::dot(last, x);                                                    // (T,) @ (T, d) → (d,)
}

ShuffleTest shuffle_test(const Mat& x, const std::vector<std::size_t>& perm) {
    require(perm.size() == x.shape(0), "shuffle_test",
            "permutation of " + std::to_string(perm.size()) + " rows for x " + shape_str(x));
    ShuffleTest r;
    r.summary = context_average(x);
    r.shuffled_summary = context_average(gather_rows(x, perm));
    r.max_abs_diff = max_abs_diff(r.summary, r.shuffled_summary);
    return r;
}

}  // namespace attn::sec01
