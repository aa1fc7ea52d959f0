// Checkpoints: everything a training run needs to go on exactly where it stopped, on disk.
//
//   DIR/latest -> step-000200          a symbolic link, replaced atomically once a save is complete
//   DIR/step-000200/manifest.txt       format, experiment, model configuration, seed, step, loss, the
//                                      sampler's RNG state, AdamW's step count, every tensor's shape
//   DIR/step-000200/<name>.npy         every weight, under the model's parameter names (block0.W_q, …),
//                                      the names `10_block --dump` uses
//   DIR/step-000200/adam_m.<name>.npy  AdamW's first and second moments
//   DIR/step-000200/adam_v.<name>.npy
//
// A save writes a new step-NNNNNN.tmp folder, renames it into place and only then points `latest` at it,
// so a run killed at any moment leaves the previous checkpoint whole; the two newest are kept. A save never
// removes the folder `latest` names: saving that step again writes step-NNNNNN-again (and back). A load checks
// everything before it changes anything: the format version, the configuration, every file's presence,
// shape and finiteness. Each failure is an attn::Error naming the file and the rule broken.
//
// The .npy files are plain NumPy arrays: np.load("DIR/latest/block0.W_q.npy").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/params.hpp"
#include "core/rng.hpp"
#include "train/optim.hpp"

namespace attn {

constexpr int kCheckpointFormat = 1;

// What a checkpoint says about itself (manifest.txt).
struct CheckpointInfo {
    std::string experiment;  // e.g. "12_language_model ladder: + LayerNorm (full block)"
    std::string config;      // the model's configuration in words; a resume must match it exactly
    std::uint64_t seed = 0;
    int step = 0;            // training steps done
    double loss = 0;         // the last step's training loss
    std::vector<double> losses;                 // every step's loss so far (history.txt), for the curves
    std::vector<std::pair<int, double>> evals;  // (step, value) of the evaluations so far
    bool stopped = false;    // training had ended early (TrainConfig::stop_when): a resume trains no more
};

// Writes params, the optimizer's state and the sampler's RNG under dir (created if missing). Returns the
// folder written (dir/step-NNNNNN, or dir/step-NNNNNN-again when `latest` names dir/step-NNNNNN).
std::string save_checkpoint(const std::string& dir, const CheckpointInfo& info, const Parameters& params, const AdamW& opt,
                            const Rng& sampler);

// Reads dir/latest (or dir itself, when it holds a manifest.txt) into params, opt and sampler. Throws attn::Error,
// before changing any of them, when anything does not fit: `expected_config` differs from the manifest's, a
// parameter is missing, extra, of another shape or not finite, a file is truncated, the format is unknown.
CheckpointInfo load_checkpoint(const std::string& dir, const std::string& expected_config, Parameters& params, AdamW& opt,
                               Rng& sampler);

// Ctrl-C (SIGINT) while a StopRequest lives sets a flag instead of killing the program: the training loop
// finishes its step, saves, and stops (attn::Interrupted). The previous handler comes back afterwards.
class StopRequest {
public:
    StopRequest();
    ~StopRequest();
    StopRequest(const StopRequest&) = delete;
    StopRequest& operator=(const StopRequest&) = delete;
    static bool requested();
    static void request();  // what the handler does (and what a test calls)
    static void clear();
};

// Only the manifest (to say what a checkpoint holds without loading it).
CheckpointInfo read_checkpoint_info(const std::string& dir);

}  // namespace attn
