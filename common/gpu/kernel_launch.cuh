// A kernel launch written once for two machines:
//   attn::gpu::launch(kernel, grid, block, shared_bytes, args...)
//   attn::gpu::launch("name", kernel, grid, block, shared_bytes, args...)   (the name goes into a launch error)
// is, under nvcc, kernel<<<grid, block, shared_bytes>>>(args...) followed by the launch check; in a C++
// translation unit that included tests/common/cuda_on_cpu.hpp first, it is cuda_on_cpu::launch, which runs
// the same kernel source on the CPU, one thread per CUDA thread. The GPU exercises (exercises/11_gpu) and the
// training operations (train_layers.cu, attention_train.cu) launch this way, so the unit tests compile those
// very files on the CPU. The two other calls their host code needs, written once the same way:
//   copy_to_host(host, device, bytes, "what")           cudaMemcpy device → host (the emulator: memcpy)
//   allow_shared_bytes(kernel, bytes, "kernel name")    lets a kernel take more than 48 KB of dynamic shared memory
// Each failure throws attn::Error naming the kernel or what was copied.
#pragma once

#include <cstddef>

#if defined(__CUDACC__)
#include <string>

#include "check.cuh"

namespace attn::gpu {
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    kernel<<<grid, block, shared_bytes>>>(args...);
    ATTN_CUDA_CHECK_LAUNCH("a kernel");  // a bad launch configuration shows here, not at the next call
}
template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    kernel<<<grid, block, shared_bytes>>>(args...);
    ATTN_CUDA_CHECK_LAUNCH(name);
}
inline void copy_to_host(void* host, const void* device, std::size_t bytes, const char* what) {
    const cudaError_t err = cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        throw ::attn::Error(std::string("copying ") + what + " (" + std::to_string(bytes) + " bytes) to the host failed: " +
                            cudaGetErrorString(err));
}
template <class... Params>
void allow_shared_bytes(void (*kernel)(Params...), std::size_t bytes, const char* name) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (err != cudaSuccess)
        throw ::attn::Error(std::string("letting ") + name + " use " + std::to_string(bytes) + " bytes of shared memory failed: " +
                            cudaGetErrorString(err));
}
}  // namespace attn::gpu
#else
#include <cstring>

namespace attn::gpu {
using cuda_on_cpu::launch;  // cuda_on_cpu.hpp must come first
inline void copy_to_host(void* host, const void* device, std::size_t bytes, const char*) { std::memcpy(host, device, bytes); }
template <class Kernel>
void allow_shared_bytes(Kernel, std::size_t, const char*) {}  // the emulator's shared memory has no limit
}  // namespace attn::gpu
#endif
