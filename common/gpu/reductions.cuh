// Warp and block reductions for the kernels (device code only): sums and maxima with warp shuffles.
// Included by attention_kernels.cuh and layer_kernels.cuh; runs on the CPU in the unit tests too.
#pragma once

#include "launch.hpp"

namespace attn::gpu::kernels {

// --- warp and block reductions -----------------------------------------------------------------------------
// Butterfly reduction over the 32 lanes of a warp: every lane ends with the result.
__device__ inline float warp_sum(float v) {
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}
__device__ inline float warp_max(float v) {
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}
// Over the whole block (blockDim.x a multiple of 32): each warp reduces, lane 0 of each parks its result
// in shared memory, and the first warp's lanes reduce those. Every thread gets the result. Called by
// every thread of the block (it synchronises).
__device__ inline float block_sum(float v) {
    __shared__ float partial[kWarp];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    v = warp_sum(v);
    __syncthreads();  // a previous call's partial[] has been read by everyone
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    return warp_sum(lane < warps ? partial[lane] : 0.0f);
}
__device__ inline float block_max(float v) {
    __shared__ float partial[kWarp];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    return warp_max(lane < warps ? partial[lane] : -INFINITY);
}

}  // namespace attn::gpu::kernels
