// Exercises 11.1–11.3 on the CPU: the kernels of 11_gpu/gpu_exercises.cu — yours in exercise_tests, the
// answers in solution_tests, whichever the include path finds first — compiled here as C++ and launched
// by the emulator (tests/common/cuda_on_cpu.hpp), so that their tests run on any machine.
#include "11_gpu/gpu_exercises.hpp"
#include "core/error.hpp"
// After every library header: the emulator's macros (threadIdx, __shared__, …) stay out of them.
#include "cuda_on_cpu.hpp"
#include "11_gpu/gpu_exercises.cu"

#include <chrono>

namespace {
// A kernel of these exercises runs a block in milliseconds here: one still running after 3 s never ends (a
// stride of 0, a loop bound that never moves). Stopped then, not at the emulator's default 10 s, so that a
// learner's endless loop fails its test in seconds (tools/progress.sh stops a test at 30 s).
const bool time_bound_set = (cuda_on_cpu::set_launch_time_limit(std::chrono::seconds(3)), true);
}  // namespace
