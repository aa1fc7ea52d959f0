// Which code computes a model on the CPU (`--engine reference|fast` on the programs that train):
//
//   reference   common/reference/: the chapter's model written to be read, layer by layer, on xtensor and
//               xtensor-blas alone. Sections 04–10 train on it by default: what a learner reads is what runs.
//   fast        common/fast/: the same functions with blocked products, the thread pool, vector loops, fused
//               passes and reused memory. 12_language_model and the benchmarks train on it by default.
//
// Both build the same parameters from a ModelConfig and a seed, so either trains a model, either reads the
// other's checkpoints, and tests/common/test_reference.cpp holds their losses and gradients to each other.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/language_model.hpp"
#include "reference/model.hpp"

namespace attn {

enum class Engine { reference, fast };
const char* engine_name(Engine e);           // "reference", "fast"
Engine engine_for(const std::string& flag);  // the engine a --engine flag's word names; anything else throws

std::unique_ptr<LanguageModel> make_cpu_model(const ModelConfig& config, std::uint64_t seed, Engine engine);

// `to` ← `from`'s weights, tensor by tensor (their names and shapes must match: a model of the same config, of
// either engine, on either device); a device model's are read back first. Throws attn::Error naming a mismatch.
void copy_weights(LanguageModel& from, LanguageModel& to);

// The trained model as the reference engine's model, for what reads a model's insides (attention maps): the
// model itself when it is one (the sections' default engine), else a reference::Model of `config` holding its
// trained weights (a model trained by --engine fast or on the GPU).
std::unique_ptr<reference::Model> as_reference_model(std::unique_ptr<LanguageModel> trained, const ModelConfig& config);

}  // namespace attn
