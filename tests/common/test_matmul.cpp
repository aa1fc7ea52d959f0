// The SGEMM-backed products against the plain-loop spec on random shapes.
#include <catch2/catch.hpp>

#include "batched.hpp"
#include "../spec.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "fast/matmul.hpp"
#include "math/stats.hpp"

using namespace attn;
using Catch::Matchers::Contains;

TEST_CASE("matmul and matmul_nt match the spec on random shapes", "[matmul]") {
    Rng rng(21);
    for (int trial = 0; trial < 20; ++trial) {
        const std::size_t n = 1 + rng.below(30), k = 1 + rng.below(30), m = 1 + rng.below(30);
        const Mat a = rng.normal_mat(n, k), b = rng.normal_mat(k, m), bt = rng.normal_mat(m, k);
        CHECK(max_abs_diff(fast::matmul(a, b), spec::matmul(a, b)) < 1e-4);
        CHECK(max_abs_diff(fast::matmul_nt(a, bt), spec::matmul(a, spec::transpose(bt))) < 1e-4);
    }
}

TEST_CASE("bmm_nt (and the tests' bmm, bmm_tn) loop 2-D GEMMs over the batch", "[matmul]") {
    Rng rng(23);
    const std::size_t B = 3, n = 4, k = 6, m = 5;
    Tensor3 a = Tensor3::from_shape({B, n, k}), b = Tensor3::from_shape({B, k, m}), bt = Tensor3::from_shape({B, m, k});
    rng.fill_normal(a.data(), a.size());
    rng.fill_normal(b.data(), b.size());
    rng.fill_normal(bt.data(), bt.size());
    Tensor3 at = Tensor3::from_shape({B, k, n});  // for bmm_tn: (B, k, n)ᵀ @ (B, k, m)
    rng.fill_normal(at.data(), at.size());
    const Tensor3 c = batched::bmm(a, b), ct = fast::bmm_nt(a, bt), ctn = batched::bmm_tn(at, b);
    for (std::size_t i = 0; i < B; ++i) {
        const Mat ai = xt::view(a, i), bi = xt::view(b, i), bti = xt::view(bt, i), ati = xt::view(at, i);
        CHECK(max_abs_diff(Mat(xt::view(c, i)), spec::matmul(ai, bi)) < 1e-5);
        CHECK(max_abs_diff(Mat(xt::view(ct, i)), spec::matmul(ai, spec::transpose(bti))) < 1e-5);
        CHECK(max_abs_diff(Mat(xt::view(ctn, i)), spec::matmul(spec::transpose(ati), bi)) < 1e-5);
    }
}

TEST_CASE("products of mismatched shapes are errors naming both shapes", "[matmul][errors]") {
    const Mat a = xt::zeros<float>({2, 3}), b = xt::zeros<float>({4, 5});
    CHECK_THROWS_WITH(fast::matmul(a, b), "matmul: inner dimensions differ: (2, 3) @ (4, 5)");
    CHECK_THROWS_WITH(fast::matmul_nt(a, b), Contains("(2, 3)") && Contains("(4, 5)"));
    const Tensor3 x = xt::zeros<float>({2, 3, 4}), y = xt::zeros<float>({3, 5, 4});
    CHECK_THROWS_WITH(fast::bmm_nt(x, y), Contains("(2, 3, 4)") && Contains("(3, 5, 4)"));
}
