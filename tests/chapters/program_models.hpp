// The models a section program's _runs test trained, read back instead of trained again.
//
// The claim tests tagged [models-of-<program>] (tests/chapters/test_*.cpp) train the models that program trains at its
// default: the same setup, seed and code. Under ctest the program's _runs test runs first (fixture models_<program>,
// tests/CMakeLists.txt) and keeps its models with --save; ATTN_PROGRAM_MODELS names the folder above the one that
// holds them. The test then loads each model and trains nothing (Checkpoints::evaluate_only), so those models are
// trained once in the suite. A loaded model is the trained one to the bit: the checkpoint holds its weights, its loss
// history and its evaluations ("12_language_model_resume_steps_0_evaluates" holds this path to the whole run). What a
// load checks: the model's configuration (shapes) and seed (its folder), and, in each test, that it trained the
// setup's steps; the learning rate, batch and the rest are the program's defaults, the same PronounSetup.
// Run by hand (build/bin/claim_tests "[C35]"), the variable is unset and the test trains its models itself. (A ctest
// run told to skip the fixture's setup, -FA or -FS, reads what an earlier _runs test left there, or fails if none did.)
#pragma once

#include <cstdlib>
#include <string>

#include "train/train.hpp"

namespace attn::test {

// Where `program`'s _runs test saved its models, to be loaded; none (train them) outside ctest.
inline Checkpoints program_models(const std::string& program) {
    const char* dir = std::getenv("ATTN_PROGRAM_MODELS");
    if (dir == nullptr || *dir == '\0') return {};
    Checkpoints k;
    k.resume_dir = std::string(dir) + "/" + program + "_runs/checkpoints";
    k.evaluate_only = true;  // each model's steps are its checkpoint's, and nothing is saved
    return k;
}

}  // namespace attn::test
