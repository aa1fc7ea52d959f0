// common/gpu/attention_train.cu itself, compiled as C++ for the unit tests: its argument checks, launch shapes and
// products (gemm_strided_batched, layers.cu, compiled here as well) run unchanged, and its
// launches (attn::gpu::launch, kernel_launch.cuh) run the kernels of attention_train_kernels.cuh on the CPU
// emulator. "Device pointers" are host pointers.
#include <cstring>
#include <initializer_list>
#include <string>

#include "attention_train.hpp"
#include "core/error.hpp"
#include "launch.hpp"
#include "ops.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "attention_train.cu"
