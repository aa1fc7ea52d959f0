// Every CUDA runtime and cuBLAS call is checked; a failure throws attn::Error naming the call, file and line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"
#include "launch.hpp"

#define ATTN_CUDA_CHECK(call)                                                                           \
    do {                                                                                               \
        const cudaError_t attn_err_ = (call);                                                          \
        if (attn_err_ != cudaSuccess) {                                                                \
            throw ::attn::Error(std::string(#call) + " failed at " + __FILE__ + ":" +                  \
                                std::to_string(__LINE__) + ": " + cudaGetErrorString(attn_err_));      \
        }                                                                                              \
    } while (0)

// The same for cuBLAS: a status other than CUBLAS_STATUS_SUCCESS throws attn::Error naming the call.
#define ATTN_CUBLAS_CHECK(call)                                                                         \
    do {                                                                                               \
        const cublasStatus_t attn_status_ = (call);                                                    \
        if (attn_status_ != CUBLAS_STATUS_SUCCESS) {                                                   \
            throw ::attn::Error(std::string(#call) + " failed at " + __FILE__ + ":" +                  \
                                std::to_string(__LINE__) + ": " + cublasGetStatusString(attn_status_)); \
        }                                                                                              \
    } while (0)

// After a kernel launch: a bad launch configuration shows up here, not at the next call. Under ATTN_GPU_SYNC=1
// (launch.hpp) it also waits for the kernel, so that a fault while it runs names it.
#define ATTN_CUDA_CHECK_LAUNCH(kernel_name)                                                             \
    do {                                                                                               \
        const cudaError_t attn_err_ = cudaGetLastError();                                              \
        if (attn_err_ != cudaSuccess) {                                                                \
            throw ::attn::Error(std::string("launch of ") + (kernel_name) + " failed at " + __FILE__ + \
                                ":" + std::to_string(__LINE__) + ": " + cudaGetErrorString(attn_err_)); \
        }                                                                                              \
        ++::attn::gpu::device_work().kernels;                                                          \
        if (::attn::gpu::sync_every_launch()) {                                                        \
            const cudaError_t attn_run_err_ = cudaDeviceSynchronize();                                 \
            if (attn_run_err_ != cudaSuccess)                                                          \
                throw ::attn::Error(std::string(kernel_name) + " failed while it ran (ATTN_GPU_SYNC) at " + \
                                    __FILE__ + ":" + std::to_string(__LINE__) + ": " +                 \
                                    cudaGetErrorString(attn_run_err_));                                \
        }                                                                                              \
    } while (0)
