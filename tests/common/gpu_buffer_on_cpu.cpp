// common/gpu/buffer.cu itself, compiled as C++ for the unit tests: DeviceBuffer and DeviceInts on the ledger,
// their memory from the emulator (kernel_launch.cuh: between guard pages, every byte 0xFF until written).
#include <string>
#include <utility>

#include "core/error.hpp"
#include "buffer.hpp"
// After every standard and library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "buffer.cu"
