// The elementwise layers' loops over threads (private to common/src). body(begin, end) covers [0, n) in one
// contiguous range per thread (OpenMP), each item an independent output: a row of a matrix, a column of a
// sum over rows, a stretch of elements. Nothing is summed across ranges, so the result is the same bits
// for any thread count. Small jobs (under kMinWork floats) stay on the calling thread: waking the others
// costs more. body must not throw (an exception cannot leave an OpenMP region): check inputs before.
#pragma once

#include <omp.h>

#include <cstddef>

#include "attn/matmul.hpp"

namespace attn {

constexpr std::size_t kMinWork = 1 << 15;

// n items of `work` floats each (the memory one item touches, roughly)
template <class Body>
void parallel_ranges(std::size_t n, std::size_t work, Body&& body) {
    const int threads = n * work < kMinWork || omp_in_parallel() ? 1 : loop_threads();
    if (threads <= 1 || n < 2) {
        body(std::size_t{0}, n);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        const std::size_t i = static_cast<std::size_t>(omp_get_thread_num()), p = static_cast<std::size_t>(omp_get_num_threads());
        const std::size_t lo = n * i / p, hi = n * (i + 1) / p;
        if (hi > lo) body(lo, hi);
    }
}

}  // namespace attn
