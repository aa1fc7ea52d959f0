// A seeded random number generator whose output is fixed by the seed alone: xoshiro256** seeded by
// splitmix64, normals by Box–Muller in double precision. Unlike std::normal_distribution, nothing here
// depends on the standard library's implementation, so the same seed gives bit-identical tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

class Rng {
public:
    // `stream` separates independent experiments that share one --seed: Rng(seed, 1) and Rng(seed, 2)
    // never overlap in practice, and changing one experiment's size leaves the other's numbers alone.
    explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);

    std::uint64_t next_u64();
    double uniform();                          // [0, 1), 53 random bits
    std::uint64_t below(std::uint64_t n);      // uniform integer in [0, n), unbiased
    double normal();                           // N(0, 1)

    Vec normal_vec(std::size_t n);                          // (n,) iid N(0, 1)
    Mat normal_mat(std::size_t rows, std::size_t cols);     // (rows, cols) iid N(0, 1)
    void fill_normal(float* out, std::size_t n);
    std::vector<std::size_t> permutation(std::size_t n);   // Fisher–Yates shuffle of 0..n-1

    // The whole state, so that a checkpoint can continue the same sequence (train/checkpoint.hpp).
    struct State {
        std::uint64_t s[4];
        bool has_spare;
        double spare;
    };
    State state() const { return {{s_[0], s_[1], s_[2], s_[3]}, has_spare_, spare_}; }
    void set_state(const State& st) {
        for (int i = 0; i < 4; ++i) s_[i] = st.s[i];
        has_spare_ = st.has_spare, spare_ = st.spare;
    }

private:
    std::uint64_t s_[4];
    bool has_spare_ = false;
    double spare_ = 0.0;
};

}  // namespace attn
