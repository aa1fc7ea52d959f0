// Exercises 11.1–11.3 on the CPU: the kernels of 11_gpu/gpu_exercises.cu — yours in exercise_tests, the
// answers in solution_tests, whichever the include path finds first — compiled here as C++ and launched
// by the emulator (tests/common/cuda_on_cpu.hpp), so that their tests run on any machine.
#include "11_gpu/gpu_exercises.hpp"
#include "attn/error.hpp"
// After every library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "11_gpu/gpu_exercises.cu"
