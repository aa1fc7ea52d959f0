// common/gpu/layers.cu itself, compiled as C++ for the unit tests: its argument checks and launch shapes run
// unchanged, its launches (attn::gpu::launch, kernel_launch.cuh) run the kernels of layer_kernels.cuh on the CPU
// emulator, and its products (kernel_launch.cuh's sgemm) a column-major loop in double, called exactly as cuBLAS
// is. "Device pointers" are host pointers.
#include <functional>
#include <string>

#include "core/error.hpp"
#include "buffer.hpp"
#include "launch.hpp"
#include "ops.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "layers.cu"
