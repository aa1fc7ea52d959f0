#include "gpu.hpp"

#include "check.cuh"
#include "launch.hpp"

namespace attn::gpu {

DeviceInfo query_device() {
    DeviceInfo info;
    const cudaError_t err = cudaGetDeviceCount(&info.count);
    if (err != cudaSuccess) {
        info.count = 0;
        info.why_none = cudaGetErrorString(err);
        cudaGetLastError();  // clear the sticky error so later calls start clean
        return info;
    }
    if (info.count == 0) {
        info.why_none = "no CUDA device";
        return info;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
        info.name = prop.name;
        info.sm_count = prop.multiProcessorCount;
        info.memory_bytes = prop.totalGlobalMem;
        info.cc_major = prop.major;
        info.cc_minor = prop.minor;
        info.fp32_cores_per_sm = fp32_cores_per_sm(prop.major, prop.minor);
        int clock = 0;
        if (cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0) == cudaSuccess) info.clock_khz = clock;
    } else {
        cudaGetLastError();
    }
    return info;
}

double DeviceInfo::fp32_peak_flops() const { return gpu::fp32_peak_flops(sm_count, fp32_cores_per_sm, clock_khz); }

}  // namespace attn::gpu
