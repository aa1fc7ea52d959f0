// The CPU emulation of CUDA stops a learner's kernel that goes out of bounds or never ends, with a message
// that names the kernel, the buffer, the index and the thread (tests/common/cuda_on_cpu_runtime.hpp) —
// never a hang, a crash or a corrupted heap. Each test plants one such kernel, checks the message word for
// word, then checks that the next, correct launch still runs: the emulator recovers.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "buffer.hpp"
#include "core/error.hpp"
// Last, after every library header: the emulator's macros (threadIdx, __shared__, …).
#include "cuda_on_cpu.hpp"

namespace gpu = attn::gpu;
using Catch::Matchers::Equals;

namespace {

// y[i] = i for i < n, and, when `past` is nonzero, also y[n − 1 + past] (thread n of a 256-thread grid when past = 1).
__global__ void fill_kernel(float* y, int n, int past) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = static_cast<float>(i);
    if (past != 0 && i == n) y[n - 1 + past] = 1.0f;
}

// y[i] = x[i + shift]: shift = 1 reads one past x's end (thread n − 1), shift = −1 one before its start (thread 0).
__global__ void shifted_copy_kernel(const float* x, float* y, int n, int shift) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = x[i + shift];
}

// y[i − 1] = 1: thread 0 writes y[−1].
__global__ void write_before_kernel(float* y, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i - 1] = 1.0f;
}

// A grid-stride loop whose stride is blockIdx.x · blockDim.x instead of gridDim.x · blockDim.x: block 0's
// stride is 0, so its threads never leave the loop (the others finish).
__global__ void zero_stride_kernel(float* y, int n) {
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += static_cast<int>(blockIdx.x * blockDim.x))
        y[i] = 2.0f;
}

// Each block's thread 0 sleeps `ms` milliseconds, then each thread writes its element: a slow but finite block.
__global__ void slow_blocks_kernel(float* y, int ms) {
    if (threadIdx.x == 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    __syncthreads();
    y[blockIdx.x * blockDim.x + threadIdx.x] = 3.0f;
}

// Dynamic shared memory of `slots` floats; each thread writes slot threadIdx.x (past the end when blockDim.x > slots).
__global__ void shared_slots_kernel(float* y, int slots) {
    ATTN_EXTERN_SHARED(float, tile);
    tile[threadIdx.x] = static_cast<float>(threadIdx.x);
    __syncthreads();
    y[threadIdx.x] = tile[(threadIdx.x + 1) % slots];
}

// Runs a correct launch and checks every element: the emulator came back from the failure before it.
void a_correct_launch_still_runs() {
    gpu::DeviceBuffer y(1000, "y");
    cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(4), dim3(256), 0, y.data(), 1000, 0);
    std::vector<float> host(1000);
    y.download(host.data(), host.size());
    for (int i = 0; i < 1000; ++i) REQUIRE(host[i] == static_cast<float>(i));
}

// Lowers the launch time limit for one test, and puts it back.
struct TimeLimit {
    explicit TimeLimit(std::chrono::milliseconds limit) : before(cuda_on_cpu::launch_time_limit()) {
        cuda_on_cpu::set_launch_time_limit(limit);
    }
    ~TimeLimit() { cuda_on_cpu::set_launch_time_limit(before); }
    std::chrono::milliseconds before;
};

}  // namespace

TEST_CASE("kernels on the CPU: a write past a buffer's end stops at once, naming kernel, thread, buffer and index",
          "[gpu-host][guards]") {
    gpu::DeviceBuffer y(1000, "y");
    // thread 232 of block 3 is i = 1000: it writes y[1000], the first float past the end
    CHECK_THROWS_WITH(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(4), dim3(256), 0, y.data(), 1000, 1),
                      Equals("kernel fill_kernel, thread 232 of block (3, 0) wrote y[1000], past the end of y's 1000 elements"));
    // 500 floats further, still on the guard page after the buffer
    CHECK_THROWS_WITH(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(4), dim3(256), 0, y.data(), 1000, 501),
                      Equals("kernel fill_kernel, thread 232 of block (3, 0) wrote y[1500], past the end of y's 1000 elements"));
    a_correct_launch_still_runs();
}

TEST_CASE("kernels on the CPU: a read past a buffer's end stops at once, named as a read", "[gpu-host][guards]") {
    gpu::DeviceBuffer x(300, "x"), y(300, "y");
    x.zero();
    CHECK_THROWS_WITH(cuda_on_cpu::launch("shifted_copy_kernel", shifted_copy_kernel, dim3(2), dim3(256), 0,
                                          static_cast<const float*>(x.data()), y.data(), 300, 1),
                      Equals("kernel shifted_copy_kernel, thread 43 of block (1, 0) read x[300], past the end of x's 300 elements"));
    a_correct_launch_still_runs();
}

TEST_CASE("kernels on the CPU: a write before a buffer's start is found in its guard zone after the launch",
          "[gpu-host][guards]") {
    gpu::DeviceBuffer y(1000, "y");
    CHECK_THROWS_WITH(cuda_on_cpu::launch("write_before_kernel", write_before_kernel, dim3(4), dim3(256), 0, y.data(), 1000),
                      Equals("kernel write_before_kernel wrote y[-1], before the start of y's 1000 elements (found in the "
                             "buffer's guard zone after the launch, so which thread wrote it is not known)"));
    // the zone is restored: the next launch over the same buffer passes its check
    CHECK_NOTHROW(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(4), dim3(256), 0, y.data(), 1000, 0));
    a_correct_launch_still_runs();
}

TEST_CASE("kernels on the CPU: a read before a buffer's start reads NaN from the guard zone", "[gpu-host][guards]") {
    gpu::DeviceBuffer x(300, "x"), y(300, "y");
    x.zero();
    cuda_on_cpu::launch("shifted_copy_kernel", shifted_copy_kernel, dim3(2), dim3(256), 0, static_cast<const float*>(x.data()),
                        y.data(), 300, -1);
    std::vector<float> host(300);
    y.download(host.data(), host.size());
    CHECK(std::isnan(host[0]));  // the output shows it, as an unwritten element does
    CHECK(host[1] == 0.0f);
}

TEST_CASE("kernels on the CPU: an endless loop is stopped at the time bound, naming the kernel and the threads still in it",
          "[gpu-host][guards]") {
    const TimeLimit limit(std::chrono::milliseconds(300));
    gpu::DeviceBuffer y(4096, "y");
    const auto started = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(cuda_on_cpu::launch("zero_stride_kernel", zero_stride_kernel, dim3(4), dim3(64), 0, y.data(), 4096),
                      Equals("kernel zero_stride_kernel was stopped: one block ran for over 0.3 s (an endless loop?): thread 0 "
                             "of block (0, 0) and 63 more threads were still in the kernel"));
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
    a_correct_launch_still_runs();
}

TEST_CASE("kernels on the CPU: the time bound is per block, so a long launch of short blocks runs to its end", "[gpu-host][guards]") {
    const TimeLimit limit(std::chrono::milliseconds(300));
    gpu::DeviceBuffer y(8 * 32, "y");
    // 8 blocks of 100 ms: 800 ms in all, each block well within the bound
    REQUIRE_NOTHROW(cuda_on_cpu::launch("slow_blocks_kernel", slow_blocks_kernel, dim3(8), dim3(32), 0, y.data(), 100));
    std::vector<float> host(y.size());
    y.download(host.data(), host.size());
    for (std::size_t i = 0; i < host.size(); ++i) REQUIRE(host[i] == 3.0f);
}

TEST_CASE("kernels on the CPU: dynamic shared memory is guarded too", "[gpu-host][guards]") {
    gpu::DeviceBuffer y(64, "y");
    // 64 threads, 63 floats of shared memory: thread 63 writes one past the end
    CHECK_THROWS_WITH(cuda_on_cpu::launch("shared_slots_kernel", shared_slots_kernel, dim3(1), dim3(64), 63 * sizeof(float),
                                          y.data(), 63),
                      Equals("kernel shared_slots_kernel, thread 63 of block (0, 0) wrote extern __shared__ memory[63], "
                             "past the end of extern __shared__ memory's 63 elements"));
    CHECK_NOTHROW(cuda_on_cpu::launch("shared_slots_kernel", shared_slots_kernel, dim3(1), dim3(64), 64 * sizeof(float), y.data(), 64));
    a_correct_launch_still_runs();
}

TEST_CASE("kernels on the CPU: a launch CUDA refuses is refused, as CUDA words it", "[gpu-host][guards]") {
    gpu::DeviceBuffer y(1000, "y");
    y.poison();
    // a grid of 0 blocks (what a call with no work must not launch), a block of 0 threads, more than 1024 threads
    const auto refused = [](const char* grid_and_block) {
        return Equals(std::string("launch of fill_kernel failed: invalid configuration argument (") + grid_and_block +
                      ": CUDA launches no grid or block of 0, nor more than 1024 threads a block)");
    };
    CHECK_THROWS_WITH(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(0), dim3(256), 0, y.data(), 1000, 0), refused("grid (0, 1), block 256"));
    CHECK_THROWS_WITH(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(4, 0), dim3(256), 0, y.data(), 1000, 0), refused("grid (4, 0), block 256"));
    CHECK_THROWS_WITH(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(4), dim3(0), 0, y.data(), 1000, 0), refused("grid (4, 1), block 0"));
    CHECK_THROWS_WITH(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(1), dim3(1025), 0, y.data(), 1000, 0), refused("grid (1, 1), block 1025"));
    std::vector<float> host(1000);
    y.download(host.data(), host.size());
    CHECK(std::isnan(host[0]));  // nothing ran
    CHECK_NOTHROW(cuda_on_cpu::launch("fill_kernel", fill_kernel, dim3(1), dim3(1024), 0, y.data(), 1000, 0));  // 1024 is allowed
    a_correct_launch_still_runs();
}
