// Section 9.8, part 1: one model, two machines. The same pre-norm stack, built once from one seed, computed
// on the CPU (the library) and on the GPU (common/gpu: CUDA kernels and cuBLAS), tensor by tensor side by side.
#pragma once

#include <cstdint>

namespace attn::sec11 {

struct CompareSetup {
    std::uint64_t seed = 0;
    int B = 2, T = 256;  // sequences and tokens per sequence (the CPU side is the slow one)
    int d_model = 512, n_heads = 8;
    int n_layers = 2;    // blocks in the compared stack
};

// Builds one model from the seed, runs block 0 and the stack on both, prints each tensor's difference;
// throws if any is out of its tolerance. The GPU model's device memory is freed on return.
void compare_cpu_gpu(const CompareSetup& setup);

}  // namespace attn::sec11
