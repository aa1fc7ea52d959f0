// Section 9.8, part 2: the chapter's n² table for one attention layer on this GPU — time and memory of the
// three kernels (v1, v2, v3: common/gpu/attention.cu) at doubling n, each compared with the CPU library's
// attention on the same q, k, v while the CPU keeps up.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "chapters/11_gpu_block/claims.hpp"
#include "gpu.hpp"

namespace attn::sec11 {

struct WallSetup {
    std::uint64_t seed = 0;
    int d_model = 512, n_heads = 8;
    int min_T = 128, max_T = 131072;  // rows double from min_T up to max_T
};

// What one (version, n) cell measured.
struct Measured {
    enum class State { ran, out_of_memory, too_slow, not_run } state = State::not_run;
    double ms = 0;            // the attention alone (q, k, v split into heads → out), best of the timed runs
    std::size_t peak = 0;     // the ledger's peak during the whole layer forward, bytes
    double diff_cpu = -1;     // max |out − the CPU's out| at this row (−1: the CPU did not run; NaN: out has NaN)
    bool finite = true;       // every output written (it was NaN before the kernel) and finite
};
struct Row {
    int T = 0;
    bool layer_oom = false;   // even q, k, v did not fit
    double proj_ms = 0;       // the four projections and the head split/merge
    double cpu_ms = -1;       // the CPU library's attention on the same q, k, v (−1: not run, too slow)
    std::array<Measured, 3> cells;
};


// Runs the table, row by row (progress on stderr). A row past the device's memory is kept, marked.
std::vector<Row> measure_wall(const WallSetup& setup);

// Prints the time, memory and useful-work tables, the fitted exponents, and where v1 and v2 ran out of
// memory, and returns what the C31 claim reads (claims.hpp); throws if a version disagrees with the CPU (or left NaN) anywhere it ran.
WallShape print_wall(std::ostream& os, const std::vector<Row>& table, const WallSetup& setup, const gpu::DeviceInfo& info);

}  // namespace attn::sec11
