// common/gpu/train_layers.cu itself, compiled as C++ for the unit tests: its argument checks, launch shapes and
// host-side sums run unchanged, and its launches (attn::gpu::launch, kernel_launch.cuh) run the kernels of
// train_layer_kernels.cuh on the CPU emulator. "Device pointers" are host pointers.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "buffer.hpp"
#include "launch.hpp"
#include "train_layers.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "train_layers.cu"
