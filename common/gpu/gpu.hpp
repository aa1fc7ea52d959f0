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
    int clock_khz = 0;        // SM clock (the boost clock the driver reports)
    std::size_t memory_bytes = 0;
    int cc_major = 0, cc_minor = 0;  // compute capability, e.g. 9.0 for an H100/H200
    int fp32_cores_per_sm = 0;       // from the compute capability (launch.hpp), 0 if unknown
    std::string why_none;     // the runtime's reason when count == 0
    // 2 · SMs · FP32 cores per SM · clock: the device's fp32 peak in flop/s (0 if the architecture is unknown).
    double fp32_peak_flops() const;
};

// Never throws: "no device" is an answer, not an error.
DeviceInfo query_device();

// Row-wise stable softmax on the device, one thread block per row (the first rung of the kernel
// ladder; the rest are in ops.hpp, the block in model_layers.hpp). host_scores and host_weights are
// row-major (rows, cols) host arrays; copies in, runs, copies out. Throws attn::Error naming the
// CUDA call, file and line on any failure.
void softmax_rows(const float* host_scores, float* host_weights, int rows, int cols);

}  // namespace attn::gpu
