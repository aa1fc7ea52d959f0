// The library's threads (private to the library: common/fast and train/optim.cpp): a pool of worker threads that sleep between jobs, used by
// the cut products (matmul.cpp), attention's (sequence, head) units (multi_head.cpp) and the elementwise
// layers' loops below and the tiled attention's units (flash.cpp). It is the library's only thread system:
// OpenMP's threads spin-wait between regions instead; two such processes on two cores (ctest's two jobs, or a
// build beside a training run) run 10× slower than one after the other.
#pragma once

#include <cstddef>
#include <functional>

#include "fast/matmul.hpp"

namespace attn::fast {

// Runs body(i, n) for i in [0, n): i = 0 on the calling thread, the others on the pool's threads; returns when
// all are done. Inside a body (or with n ≤ 1) the parts run one after another on the calling thread.
void run_on_threads(int n, const std::function<void(int, int)>& body);
// Whether this thread is running a body of run_on_threads.
bool on_pool_thread();
// The cores this process may run on, at most ATTN_THREADS when that is set (matmul.cpp).
int available_threads();

// body(begin, end) covers [0, n) in one contiguous range per thread, each item an independent output: a row
// of a matrix, a column of a sum over rows, a stretch of elements. Nothing is summed across ranges, so the
// result is the same bits for any thread count. Small jobs (under kMinWork floats) stay on the calling
// thread: waking the others costs more. body must not throw: check inputs before.
constexpr std::size_t kMinWork = 1 << 18;

// n items of `work` floats each (the memory one item touches, roughly)
template <class Body>
void parallel_ranges(std::size_t n, std::size_t work, Body&& body) {
    const int threads = n * work < kMinWork || on_pool_thread() ? 1 : loop_threads();
    if (threads <= 1 || n < 2) {
        body(std::size_t{0}, n);
        return;
    }
    run_on_threads(threads, [&](int i, int p) {
        const std::size_t lo = n * static_cast<std::size_t>(i) / static_cast<std::size_t>(p),
                          hi = n * static_cast<std::size_t>(i + 1) / static_cast<std::size_t>(p);
        if (hi > lo) body(lo, hi);
    });
}

}  // namespace attn::fast
