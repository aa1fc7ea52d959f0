// What a training run shows and takes on the command line: the --save / --every / --resume and --engine
// flags of the programs that train, and a run's loss curve for the pictures.
#pragma once

#include <string>
#include <vector>

#include "report/cli.hpp"
#include "report/svg.hpp"
#include "train/engine.hpp"
#include "train/train.hpp"

namespace attn {

// --save DIR, --every N, --resume DIR into `checkpoints` (train/train.hpp's Checkpoints says what each does);
// both folders are checked before anything trains.
void add_checkpoint_flags(Cli& cli, Checkpoints& checkpoints);
// --engine reference|fast, its default the value `engine` holds when called (train/engine.hpp).
void add_engine_flag(Cli& cli, Engine& engine);

// A training curve to plot: the mean of each run of `window` losses (one batch's loss is noisy), drawn at
// the step that ends the run — window, 2·window, …
svg::Series loss_curve(const std::string& name, const std::vector<double>& losses, std::size_t window,
                       const std::string& colour, bool dashed = false);

}  // namespace attn
