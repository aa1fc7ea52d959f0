// The emulator's runtime (cuda_on_cpu_runtime.cpp): what cuda_on_cpu.hpp's launch template calls, kept out of
// the header so that it has no macros and no templates. Three jobs:
//
//   - device memory with guard zones. allocate() maps each buffer on pages of its own, its last element
//     against a page the process may not touch and a guard zone filled with a known NaN before its first
//     element. A kernel that reads or writes past a buffer's end stops at once, on the very access; one that
//     writes before its start is found when the launch returns (the guard zone changed); either way the launch
//     throws attn::Error naming the kernel, the buffer, the index and, for the first, the CUDA thread.
//   - a bound on a block's time: a launch whose current block has run for longer than launch_time_limit()
//     (an endless loop; the blocks of a grid run one after another) is stopped and throws, naming the kernel
//     and the threads that were still in it.
//   - the barriers (__syncthreads, a warp's shuffle) and the CUDA threads (fibers), which an aborted launch unwinds.
//
// What is not guarded: __shared__ arrays (statics), and host memory a test passes to a kernel directly
// (std::vector, attn::Mat). A read before a buffer's start, within its guard zone, returns that NaN: it shows
// in the output, as any NaN does, but is not reported as a read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace cuda_on_cpu {

// `bytes` of guarded device memory named `name` (the message's "weights[1000]"), every byte 0xFF (floats NaN,
// ints −1) until written; never null.
void* allocate(std::size_t bytes, const std::string& name);
void release(void* data) noexcept;

// How long one block of a launch may run before the launch is stopped (10 s, where the slowest block of the
// tests takes well under a second; a test that plants an endless loop lowers it).
std::chrono::milliseconds launch_time_limit();
void set_launch_time_limit(std::chrono::milliseconds limit);

// C = alpha op(A) op(B) + beta C, all column-major as in Fortran's BLAS and cuBLAS: op(A) is (m, k), op(B) (k, n),
// C (m, n); element (i, j) of a matrix with leading dimension ld is at [i + j·ld]. Each entry summed in double;
// beta = 0 does not read C. What cuBLAS's SGEMM computes, for kernel_launch.cuh's sgemm on the emulator.
void column_major_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
                        int ldb, float beta, float* C, int ldc);
// TF32 products (cuBLAS's CUBLAS_TF32_TENSOR_OP_MATH): column_major_sgemm reads each operand rounded to TF32 —
// 10 mantissa bits, to nearest, ties to even — and sums the exact products as before. Off until set.
void set_tf32(bool on);
float to_tf32(float x);

// The shared memory a block may opt in to on the card the emulator imitates: an H100's or H200's 232,448 bytes
// (227 KB) unless a test sets another card's (48 KB, or a consumer card's 101,376). The kernels' own
// __shared__ arrays are host memory here; what this limits is what allow_shared_bytes lets a launch ask for.
std::size_t shared_bytes_per_block();
void set_shared_bytes_per_block(std::size_t bytes);

// Blocks finished since the program started: the launch's thread 0 counts each (the time bound's progress).
inline std::atomic<std::uint64_t> blocks_finished{0};

// Thrown inside the emulated threads when a launch is aborted: unwinds a thread waiting at a barrier.
struct Aborted {};

// __syncthreads over a block or a warp's shuffle: every thread waits until `count` have arrived. Unlike
// std::barrier it can be aborted, so that the other threads of a launch stop when one of them faults.
class Barrier {
public:
    explicit Barrier(unsigned count) : count_(count) {}
    void arrive_and_wait();
    unsigned phase() const { return phase_.load(std::memory_order_acquire); }  // how many times it has opened

private:
    const unsigned count_;
    std::atomic<unsigned> arrived_{0};
    std::atomic<unsigned> phase_{0};
    friend void abort_launch();
};

// Runs body(t) for t = 0 … threads − 1, each as a CUDA thread of its own (a fiber; a real thread under TSan), as the launch of `kernel`
// (its name, for the messages). Returns when every one has returned; throws attn::Error when one touched
// memory outside a buffer, wrote a guard zone, or the launch ran past the time limit.
void run_launch(const char* kernel, unsigned threads, const std::function<void(unsigned)>& body);

// The barriers of the launch under way (run_launch aborts them all when a thread faults).
void register_barrier(Barrier* barrier);
void abort_launch();

}  // namespace cuda_on_cpu
