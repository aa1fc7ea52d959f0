// The models a section program's _runs test trained, read back instead of trained again.
//
// A claim test below trains the models its program trains at its default (the same setup, seed and code). When
// ctest runs it, the program's _runs test has just trained them with --save (tests/programs/CMakeLists.txt, fixture
// models_<program>) and ATTN_PROGRAM_MODELS names the folder that holds its checkpoints: the test then loads each
// trained model and trains nothing (Checkpoints::evaluate_only), so the suite trains each model once. Loaded, a
// model is the trained one to the bit (the checkpoint holds its weights, its loss history and its evaluations;
// "05_multi_head_resume_equals_whole_run" holds a resumed run to the whole one). Run by hand (claim_tests), the
// variable is unset and the test trains its models itself.
#pragma once

#include <cstdlib>
#include <string>

#include "train/train.hpp"

namespace attn::test {

// Where `program`'s _runs test saved its models, to be read only; none (train them) outside ctest.
inline Checkpoints program_models(const std::string& program) {
    const char* dir = std::getenv("ATTN_PROGRAM_MODELS");
    if (dir == nullptr || *dir == '\0') return {};
    Checkpoints k;
    k.resume_dir = std::string(dir) + "/" + program + "_runs/checkpoints";
    k.evaluate_only = true;  // each model's steps are its checkpoint's, and nothing is saved
    k.read_only = true;
    return k;
}

}  // namespace attn::test
