// Runs the project's CUDA kernel source on the CPU, for tests on machines without a GPU (CI, laptops).
//
// Include this first, then the kernel headers (common/gpu/*_kernels.cuh), then call
//   cuda_on_cpu::launch(kernel, grid, block, shared_bytes, args...)
// where CUDA would write kernel<<<grid, block, shared_bytes>>>(args...).
//
// One launch at a time, from one host thread, and none in a forked child (the pool's threads are not there).
//
// How: every CUDA thread of a block is a fiber (its own stack, kept between launches) on one worker thread,
// each running until it waits at a barrier, then the next (under ThreadSanitizer a real thread each, all
// running at once, so that a missing barrier is a race TSan reports); the blocks of the grid run one after
// another (every thread walks the same block sequence, with a barrier between blocks). __syncthreads is a barrier over the block; a warp shuffle parks each lane's value in a
// slot and reads its partner's between two barriers over the warp. __shared__ arrays become statics
// (one copy, shared by the threads, as a block's shared memory is); dynamic shared memory is a buffer
// filled with NaN, so a kernel that reads shared memory it never wrote produces NaN, not a lucky zero.
// Memory errors and endless loops end the launch with an attn::Error that names the kernel, the buffer,
// the index and the thread (cuda_on_cpu_runtime.hpp: guard pages and zones around every device buffer and
// the dynamic shared memory, and a bound on a launch's time).
//
// What it checks is the kernels' logic — indices, masks, tiling, the reductions, synchronisation order —
// not their speed, nor what only hardware does (memory coalescing, register limits, launch limits). It
// covers exactly what our kernels use: 1-D blocks, 2-D grids, __syncthreads, __shfl_xor_sync over full
// warps, static and dynamic shared memory, expf/erff/sqrtf/fmaxf. A kernel must not return early and then
// call __syncthreads in other threads (also a bug on a GPU, where it hangs; here the launch's time bound stops it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cuda_on_cpu_runtime.hpp"
#include "launch.hpp"

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace cuda_on_cpu {

inline thread_local dim3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;
inline Barrier* block_barrier = nullptr;
inline std::vector<std::unique_ptr<Barrier>> warp_barriers;
inline std::vector<float> warp_slots;   // one per thread: the value a lane offers in a shuffle
inline float* dynamic_shared = nullptr;  // extern __shared__, as floats (all our kernels use float)

inline void syncthreads() { block_barrier->arrive_and_wait(); }

inline float shfl_xor(float v, int lane_mask) {
    const unsigned t = thread_idx.x, warp = t / 32, lane = t % 32;
    warp_slots[t] = v;
    warp_barriers[warp]->arrive_and_wait();
    const float other = warp_slots[warp * 32 + (lane ^ static_cast<unsigned>(lane_mask))];
    warp_barriers[warp]->arrive_and_wait();  // nobody overwrites a slot before its partner has read it
    return other;
}

// A launch's dynamic shared memory: `bytes` of guarded memory, every float NaN until the kernel writes it.
class SharedMemory {
public:
    explicit SharedMemory(std::size_t bytes) : data_(static_cast<float*>(allocate(bytes, "extern __shared__ memory"))) {
        dynamic_shared = data_;
    }
    ~SharedMemory() {
        dynamic_shared = nullptr;
        release(data_);
    }
    SharedMemory(const SharedMemory&) = delete;
    SharedMemory& operator=(const SharedMemory&) = delete;

private:
    float* data_;
};

// kernel<<<grid, block, shared_bytes>>>(args...), named `name` in the errors it throws; run_kernel does not count
// it (a CUDA Graph's replay: kernel_launch.cuh counted it when it was recorded).
template <class Kernel, class... Args>
void run_kernel(const char* name, Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    if (block.y != 1 || block.z != 1 || grid.z != 1) throw std::logic_error("cuda_on_cpu: 1-D blocks and 2-D grids only");
    // What CUDA refuses at the launch (cudaErrorInvalidConfiguration), refused here too, as check.cuh words it on a
    // device: a grid or a block of 0, or more than 1024 threads a block. A call with no work must launch nothing.
    if (grid.x == 0 || grid.y == 0 || block.x == 0 || block.x > 1024)
        throw attn::Error(std::string("launch of ") + name + " failed: invalid configuration argument (grid (" + std::to_string(grid.x) + ", " +
                          std::to_string(grid.y) + "), block " + std::to_string(block.x) + ": CUDA launches no grid or block of 0, nor more than 1024 threads a block)");
    const unsigned n = block.x;
    block_dim = block;
    grid_dim = grid;
    Barrier bar(n);
    block_barrier = &bar;
    register_barrier(&bar);
    warp_barriers.clear();
    for (unsigned w = 0; w * 32 < n; ++w) {
        warp_barriers.push_back(std::make_unique<Barrier>(std::min(32u, n - w * 32)));
        register_barrier(warp_barriers.back().get());
    }
    warp_slots.assign(n, 0.0f);
    const SharedMemory shared(shared_bytes);
    run_launch(name, n, [&](unsigned t) {
        thread_idx = dim3(t);
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                block_idx = dim3(bx, by);
                kernel(args...);
                bar.arrive_and_wait();  // the next block starts when this one is done with shared memory
                if (t == 0) blocks_finished.fetch_add(1, std::memory_order_relaxed);
            }
    });
    block_barrier = nullptr;
}

template <class Kernel, class... Args>
void launch(const char* name, Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    ++attn::gpu::device_work().kernels;  // as check.cuh counts a launch on a GPU
    run_kernel(name, kernel, grid, block, shared_bytes, args...);
}

// The same without a name, as a plain kernel<<<…>>> is written.
template <class Kernel, class... Args>
void launch(Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    launch("(a kernel launched without a name)", kernel, grid, block, shared_bytes, args...);
}

}  // namespace cuda_on_cpu

// The CUDA vocabulary the kernel headers use.
#define __global__ inline  // kernel headers are included by several test files
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define threadIdx (cuda_on_cpu::thread_idx)
#define blockIdx (cuda_on_cpu::block_idx)
#define blockDim (cuda_on_cpu::block_dim)
#define gridDim (cuda_on_cpu::grid_dim)
#define ATTN_EXTERN_SHARED(type, name) type* name = cuda_on_cpu::dynamic_shared
inline void __syncthreads() { cuda_on_cpu::syncthreads(); }
inline float __shfl_xor_sync(unsigned /*mask*/, float v, int lane_mask) { return cuda_on_cpu::shfl_xor(v, lane_mask); }
