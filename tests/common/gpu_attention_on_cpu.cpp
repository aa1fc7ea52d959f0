// common/gpu/attention.cu itself, compiled as C++ for the unit tests: its argument checks and launch shapes run
// unchanged, and its launches (attn::gpu::launch, kernel_launch.cuh) run the kernels of attention_kernels.cuh on
// the CPU emulator; its products go to layers.cu's gemm_strided_batched (gpu_layers_on_cpu.cpp). "Device pointers" are host
// pointers.
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "buffer.hpp"
#include "launch.hpp"
#include "ops.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "attention.cu"
