// A kernel launch written once for two machines:
//   attn::gpu::launch(kernel, grid, block, shared_bytes, args...)
// is, under nvcc, kernel<<<grid, block, shared_bytes>>>(args...) followed by the launch check; in a C++
// translation unit that included tests/common/cuda_on_cpu.hpp first, it is cuda_on_cpu::launch, which runs
// the same kernel source on the CPU, one thread per CUDA thread. The GPU exercises (exercises/11_gpu) launch
// this way, so their tests run on any machine and on the device.
#pragma once

#include <cstddef>

#if defined(__CUDACC__)
#include "check.cuh"

namespace attn::gpu {
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    kernel<<<grid, block, shared_bytes>>>(args...);
    ATTN_CUDA_CHECK_LAUNCH("a kernel");  // a bad launch configuration shows here, not at the next call
}
}  // namespace attn::gpu
#else
namespace attn::gpu {
using cuda_on_cpu::launch;  // cuda_on_cpu.hpp must come first
}  // namespace attn::gpu
#endif
