// Section 9.8, the n² wall: how much memory a computation needs, measured as the rise of the process's
// peak resident memory (RSS) while it runs. The chapter's table sets the attention matrices' B·h·T²·4
// bytes beside this measured peak for materialised and for tiled attention.
//
// Method (Linux): before the call, give freed heap memory back to the system (glibc's malloc_trim), read
// the resident size (VmRSS in /proc/self/status) and reset the kernel's high-water mark of it by writing
// "5" to /proc/self/clear_refs; after the call, read the high-water mark (VmHWM). The rise is
// peak − before.
//
// Limits — what it measures is resident pages, not bytes asked of the allocator:
//   - page granularity (4 KiB), and memory allocated but never touched does not count (an xtensor made
//     by from_shape and never written costs nothing resident);
//   - everything in the process counts: other threads' allocations during the call, code and library
//     pages touched for the first time, OpenBLAS's buffers on its first call (warm up before measuring);
//   - memory the allocator keeps after free() and that malloc_trim cannot return (a fragmented heap) can
//     be reused by the call without raising RSS, so the rise can undercount by that much;
//   - the high-water mark is one per process: measurements cannot nest (the inner reset hides the
//     outer call's earlier peak) and must not run in two threads at once;
//   - where clear_refs cannot be written (not Linux, a restricted /proc) the mark is the peak since the
//     process started: `reset` is false and the rise is then only an upper bound. Off Linux every number
//     reads 0.
#pragma once

#include <cstddef>
#include <functional>

namespace attn {

struct PeakMemory {
    std::size_t before = 0;  // bytes resident when the call started (after malloc_trim)
    std::size_t peak = 0;    // the most bytes resident at any moment during the call
    bool reset = false;      // the high-water mark was reset before the call (false: `peak` may be older)
    std::size_t rise() const { return peak > before ? peak - before : 0; }  // what the call added at its peak
};

// Runs body() once and measures its peak resident memory as described above.
PeakMemory measure_peak_memory(const std::function<void()>& body);

std::size_t resident_bytes();       // VmRSS now; 0 where /proc/self/status cannot be read
std::size_t peak_resident_bytes();  // VmHWM: the high-water mark since start or the last reset
bool reset_peak_resident();         // writes "5" to /proc/self/clear_refs; false if that is not possible

// A training step allocates its activations and frees them, the same sizes every step. By default glibc serves
// blocks over 128 KiB with mmap and hands them back to the kernel on free, and trims the heap's top when
// enough is free: the next step then page-faults on fresh pages, which the kernel zeroes first (a quarter of
// a small model's step on this machine, an eighth of the full model's at a vocabulary of 1024). This keeps
// every block in the heap across steps, so a step reuses the last one's pages. Process-wide and idempotent
// (glibc only; elsewhere it does nothing); train_loop and 10_block's n² table call it.
void keep_freed_memory();

}  // namespace attn
