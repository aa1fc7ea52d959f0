// Where a model computes, and how the GPU runs it, each choice by name: what a training setup carries
// (train/train.hpp) and the GPU model reads (gpu/gpu_model.hpp). gpu/placement.hpp builds a model on the
// device a setup names.
#pragma once

#include "core/op.hpp"

namespace attn {

enum class Device { cpu, gpu };
inline const char* device_name(Device d) { return d == Device::gpu ? "gpu" : "cpu"; }

// How the GPU model runs, each choice by name; the defaults are the plain ones.
// Which attention the blocks train with: FlashAttention-2 where it takes the shape (causal learned weights,
// d_k = d_v ≤ 128) and its blocks fit the card's shared memory, else the materialised (B·h, T, T) weights; or one
// of the two by name.
enum class AttentionPath { automatic, materialised, flash };
// eager: every kernel and product launched from the host as the step runs. graph: a training step's forward and
// backward (all but the token uploads, the loss's read-back and the embedding's data-dependent backward) recorded
// once as CUDA Graphs and replayed with one launch each: the same work, the same bits, fewer launches.
enum class Launches { eager, graph };
struct GpuSettings {
    AttentionPath attention = AttentionPath::automatic;
    Matmul matmul = Matmul::fp32;  // the products' precision (core/op.hpp)
    Launches launches = Launches::eager;
};

}  // namespace attn
