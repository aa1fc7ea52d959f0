// One exception type for everything the library refuses. Its message names the function, the shapes
// and the rule broken, e.g. "masked_softmax: row 2 of (3, 3) is fully masked (policy: error)".
// Programs catch it in main (see cli.hpp: run_program) and exit with status 1.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown by an exercise stub that the learner has not written yet.
class NotImplemented : public Error {
public:
    using Error::Error;
};

// A run stopped by Ctrl-C (SIGINT) after saving a checkpoint: run_program prints its message (how to resume)
// and exits with status 130, the shell's code for an interrupted program.
class Interrupted : public Error {
public:
    using Error::Error;
};

// `--device gpu` where there is no GPU (none visible, or a build without CUDA): run_program prints why and
// exits with status 77, the code test harnesses read as SKIPPED.
class NoDevice : public Error {
public:
    using Error::Error;
};

// Throw Error("<where>: <what>") unless cond holds.
inline void require(bool cond, const std::string& where, const std::string& what) {
    if (!cond) throw Error(where + ": " + what);
}

// The stub body of every exercise: "not implemented: exercise 2.1 stable_softmax — <what to do>".
[[noreturn]] void not_implemented(const std::string& exercise, const std::string& function,
                                  const std::string& what_to_do);

// Throws if any entry is NaN or ±Inf, naming the function, the shape and the first bad index.
void require_finite(const float* data, std::size_t n, const std::string& where, const std::string& shape);

}  // namespace attn
