#include "gpu.hpp"

#include "check.cuh"

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
        int clock = 0;
        if (cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0) == cudaSuccess) info.clock_khz = clock;
    }
    return info;
}

}  // namespace attn::gpu
