// The committed runs at the chapter's setup (docs/runs/*.txt), judged again by today's rule (claims.hpp).
//
// A run of `12_language_model <experiment> --full` takes an hour or more a seed on a CPU, so its output is
// committed under docs/runs/ and not run by the tests. The verdict it printed is the rule of the day it ran.
// `12_language_model --judge docs/runs` reads each run's tables back — the perplexities and score statistics it
// printed, two or three decimals — and decides its claims as a live run does, so every committed run is judged
// by the same rule as everything else:
//   - the ladder's files (one a seed) are decided together, over their seeds, by their own spread;
//   - that spread, the sd over seeds of log(ppl_a / ppl_b) pooled over the rung pairs the ladder's claims
//     compare, is what each experiment that ran at one seed borrows (claims.hpp: kFullLogRatioSd; a test holds
//     the constant to what this measures from the committed files);
//   - a run whose setup is not today's --full setup says so on its claim's line, with today's beside it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "report/claims.hpp"

namespace attn::sec12 {

// One committed run: its file, its seed (--seed on its Command: line, 0 without), and its lines.
struct RunFile {
    std::string path;  // as given (docs/runs/ladder-full-cpu.txt)
    std::uint64_t seed = 0;
    std::vector<std::string> lines;
};
// Every run under dir, by name: the files named <experiment>-full-<device>[-seed<N>].txt (docs/runs/README.md); throws
// attn::Error naming the directory when it holds none.
std::vector<RunFile> read_run_files(const std::string& dir);

// The ladder's spread over the committed seeds: the sd over seeds of log(ppl_a / ppl_b), pooled over the rung
// pairs the ladder's claims compare. seeds < 2: none measured (sd NaN).
struct LadderSpread {
    int seeds = 0;
    double log_ratio_sd = kNoSize;
    std::vector<std::string> files;
};
LadderSpread ladder_spread(const std::vector<RunFile>& runs);

// Prints what each file is and adds every claim the files decide to `claims` (each line names its files).
// Throws attn::Error naming the file and the line where a table cannot be read.
void judge_runs(std::ostream& os, const std::vector<RunFile>& runs, ClaimReport& claims);

}  // namespace attn::sec12
