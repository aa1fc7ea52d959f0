// The GPU side of the library (CUDA C++). This header is plain C++ — no CUDA types, no xtensor —
// so any translation unit can call it; the kernels live in .cu files that take raw pointers and
// shapes. Built only where nvcc exists (ATTN_HAVE_CUDA).
#pragma once

#include <cstddef>
#include <string>

namespace attn::gpu {

struct DeviceInfo {
    int count = 0;            // CUDA devices visible; 0 where there is none (or no driver)
    std::string name;         // of device 0
    int sm_count = 0;         // streaming multiprocessors
    int clock_khz = 0;        // SM clock
    std::size_t memory_bytes = 0;
    std::string why_none;     // the runtime's reason when count == 0
};

// Never throws: "no device" is an answer, not an error.
DeviceInfo query_device();

// Row-wise stable softmax on the device, one thread block per row (the first rung of the kernel
// ladder; the later ones come with the block on the GPU). host_scores and host_weights are
// row-major (rows, cols) host arrays; copies in, runs, copies out. Throws attn::Error naming the
// CUDA call, file and line on any failure.
void softmax_rows(const float* host_scores, float* host_weights, int rows, int cols);

}  // namespace attn::gpu
