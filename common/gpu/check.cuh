// Every CUDA runtime call is checked; a failure throws attn::Error naming the call, file and line.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "attn/error.hpp"

#define ATTN_CUDA_CHECK(call)                                                                           \
    do {                                                                                               \
        const cudaError_t attn_err_ = (call);                                                          \
        if (attn_err_ != cudaSuccess) {                                                                \
            throw ::attn::Error(std::string(#call) + " failed at " + __FILE__ + ":" +                  \
                                std::to_string(__LINE__) + ": " + cudaGetErrorString(attn_err_));      \
        }                                                                                              \
    } while (0)
