// C14's experiment on the pronoun task: one head without W_o against four heads with it, the rest the block of
// 10_block (pronoun_block_config). The chapter's comparison is the ladder of Section 9.1 (CLAIMS.md): "4 heads"
// adds W_o and its bias to the one-head model, d² + d parameters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/pronoun.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec05 {

struct OneVsFour {
    PronounRun one;   // one head, no W_o: the merged head is the sub-layer's output
    PronounRun four;  // four heads + W_o
};
// The two models on `task` (setup.seed's initialisation and batches), side by side on the cores.
OneVsFour train_one_vs_four(const PronounTask& task, const PronounSetup& setup);

// The same two models at seeds first, first + 1, …, n of them, each its own task split (the role version),
// initialisation and batches (setup.seed is not read); every model a job of its own, side by side on the cores,
// the same bits as one after the other. Only `first`'s show progress bars.
std::vector<OneVsFour> train_one_vs_four_seeds(std::uint64_t first, std::size_t n, const PronounSetup& setup);

// Four heads' held-out accuracy less one head's, in points.
double heldout_gap(const OneVsFour& runs);

// Writes svg_path (held-out accuracy against step) and its _loss sibling (the loss curves); returns the sibling.
std::string draw_one_vs_four(const OneVsFour& runs, const std::string& svg_path);

}  // namespace attn::sec05
