// Runs the project's CUDA kernel source on the CPU, for tests on machines without a GPU (CI, laptops).
//
// Include this first, then the kernel headers (common/gpu/*_kernels.cuh), then call
//   cuda_on_cpu::launch(kernel, grid, block, shared_bytes, args...)
// where CUDA would write kernel<<<grid, block, shared_bytes>>>(args...).
//
// One launch at a time, from one host thread, and none in a forked child (the pool's threads are not there).
//
// How: one std::thread per CUDA thread of a block (kept in a pool between launches), all of them real threads
// running at once; the blocks of the grid run one after another (every thread walks the same block sequence, with a barrier between
// blocks). __syncthreads is a std::barrier over the block; a warp shuffle parks each lane's value in a
// slot and reads its partner's between two barriers over the warp. __shared__ arrays become statics
// (one copy, shared by the threads, as a block's shared memory is); dynamic shared memory is a buffer
// filled with NaN, so a kernel that reads shared memory it never wrote produces NaN, not a lucky zero.
//
// What it checks is the kernels' logic — indices, masks, tiling, the reductions, synchronisation order —
// not their speed, nor what only hardware does (memory coalescing, register limits, launch limits). It
// covers exactly what our kernels use: 1-D blocks, 2-D grids, __syncthreads, __shfl_xor_sync over full
// warps, static and dynamic shared memory, expf/erff/sqrtf/fmaxf. A kernel must not return early and then
// call __syncthreads in other threads (also a bug on a GPU).
#pragma once

#include <algorithm>
#include <barrier>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace cuda_on_cpu {

inline thread_local dim3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;
inline std::barrier<>* block_barrier = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
inline std::vector<float> warp_slots;      // one per thread: the value a lane offers in a shuffle
inline std::vector<float> dynamic_shared;  // extern __shared__, as floats (all our kernels use float)

inline void syncthreads() { block_barrier->arrive_and_wait(); }

inline float shfl_xor(float v, int lane_mask) {
    const unsigned t = thread_idx.x, warp = t / 32, lane = t % 32;
    warp_slots[t] = v;
    warp_barriers[warp]->arrive_and_wait();
    const float other = warp_slots[warp * 32 + (lane ^ static_cast<unsigned>(lane_mask))];
    warp_barriers[warp]->arrive_and_wait();  // nobody overwrites a slot before its partner has read it
    return other;
}

// The threads that play a block's CUDA threads, kept from one launch to the next: creating a std::thread per CUDA
// thread at every launch cost more than the kernels themselves (a training step launches a few hundred).
class ThreadPool {
public:
    static ThreadPool& get() {
        static ThreadPool pool;
        return pool;
    }
    // Runs body(t) for t = 0 … n − 1, each on its own thread, all at once; returns when every one has returned.
    void run(unsigned n, const std::function<void(unsigned)>& body) {
        std::unique_lock lock(mu_);
        while (workers_.size() < n) {  // a new worker takes part from the next generation on, this one included
            const unsigned id = static_cast<unsigned>(workers_.size());
            workers_.emplace_back([this, id, seen = generation_] { work(id, seen); });
        }
        body_ = &body, active_ = n, remaining_ = n, ++generation_;
        start_.notify_all();
        done_.wait(lock, [&] { return remaining_ == 0; });
        body_ = nullptr;
    }
    ~ThreadPool() {
        {
            std::lock_guard lock(mu_);
            stop_ = true, ++generation_;
        }
        start_.notify_all();
        for (std::thread& w : workers_) w.join();
    }

private:
    void work(unsigned id, std::uint64_t seen) {
        std::unique_lock lock(mu_);
        for (;;) {
            start_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            if (stop_) return;
            if (id >= active_) continue;  // this launch has fewer threads
            const std::function<void(unsigned)>* body = body_;
            lock.unlock();
            (*body)(id);
            lock.lock();
            if (--remaining_ == 0) done_.notify_one();
        }
    }
    std::mutex mu_;
    std::condition_variable start_, done_;
    std::vector<std::thread> workers_;
    const std::function<void(unsigned)>* body_ = nullptr;
    unsigned active_ = 0, remaining_ = 0;
    std::uint64_t generation_ = 0;
    bool stop_ = false;
};

template <class Kernel, class... Args>
void launch(Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    if (block.y != 1 || block.z != 1 || grid.z != 1) throw std::logic_error("cuda_on_cpu: 1-D blocks and 2-D grids only");
    const unsigned n = block.x;
    block_dim = block;
    grid_dim = grid;
    std::barrier<> bar(n);
    block_barrier = &bar;
    warp_barriers.clear();
    for (unsigned w = 0; w * 32 < n; ++w)
        warp_barriers.push_back(std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(std::min(32u, n - w * 32))));
    warp_slots.assign(n, 0.0f);
    dynamic_shared.assign(shared_bytes / sizeof(float) + 1, std::numeric_limits<float>::quiet_NaN());
    ThreadPool::get().run(n, [&](unsigned t) {
        thread_idx = dim3(t);
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                block_idx = dim3(bx, by);
                kernel(args...);
                bar.arrive_and_wait();  // the next block starts when this one is done with shared memory
            }
    });
    block_barrier = nullptr;
}

// The same, named as the device's launch is (attn::gpu::launch("name", kernel, ...)): the name only matters there.
template <class Kernel, class... Args>
void launch(const char* /*name*/, Kernel kernel, dim3 grid, dim3 block, std::size_t shared_bytes, Args... args) {
    launch(kernel, grid, block, shared_bytes, args...);
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
#define ATTN_EXTERN_SHARED(type, name) type* name = cuda_on_cpu::dynamic_shared.data()
inline void __syncthreads() { cuda_on_cpu::syncthreads(); }
inline float __shfl_xor_sync(unsigned /*mask*/, float v, int lane_mask) { return cuda_on_cpu::shfl_xor(v, lane_mask); }
