#!/usr/bin/env bash
# tools/check_spills.sh [BUILD_DIR] — do the attention and training kernels fit in registers?
#
# Reads what ptxas said of every kernel when the build compiled each common/gpu/*.cu the programs link —
# attention.cu (the inference kernels v1–v3), attention_train.cu (the training attention: materialised and
# flash), layers.cu and train_layers.cu (the block's and the training's layers), softmax.cu, and the host-side
# buffer.cu and device.cu — with the build's own flags, on every architecture it targets: the build keeps that
# report beside each object (OBJECT.ptxas, written by tools/ptxas_report.sh, nvcc's launcher). Prints
# registers, stack and spills per kernel and architecture, and fails:
#   - if attention_v3 or a flash kernel uses any local memory at any d_head: a spill (a value ptxas had no
#     register for, parked off-chip) or a stack frame (an array indexed at run time, which registers cannot
#     be). Local memory is as slow as global memory, and the tiled kernels' point is to stay on-chip;
#   - if any training kernel spills (a stack frame is allowed there: the row kernels index small arrays).
# A kernel within 8 registers of the 255 a thread may have is flagged "AT THE LIMIT": one more live value
# and it spills (flash_backward_dkdv<64, 64> is the one to watch).
# Needs a build that configured the CUDA targets (default BUILD_DIR: build), built since its last change.
# tools/check_spills.sh --parse REPORT… judges reports already written (how a test plants a spill).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reports=()
if [ "${1:-}" = --parse ]; then
    shift
    reports=("$@")
    BUILD=.
fi
[ ${#reports[@]} -gt 0 ] || BUILD="$(cd "${1:-$ROOT/build}" && pwd)"

for source in "$ROOT"/common/gpu/*.cu; do
    [ "$BUILD" != . ] || break
    name=$(basename "$source" .cu)
    obj="$BUILD/common/CMakeFiles/attn_gpu.dir/gpu/$name.cu.o"
    report="$obj.ptxas"
    [ -f "$obj" ] || { echo "check_spills: $name.cu is not compiled in $BUILD (configured without CUDA, or not built yet?)" >&2; exit 2; }
    # The launcher writes the report after the object: an object newer than its report was compiled without it.
    [ -f "$report" ] && ! [ "$obj" -nt "$report" ] ||
        { echo "check_spills: no ptxas report for $name.cu beside its object ($report); rebuild: cmake --build $BUILD" >&2; exit 2; }
    reports+=("$report")
done

# ptxas says, per kernel and architecture (names demangled by c++filt):
#   ptxas info    : Compiling entry function 'void attn::gpu::kernels::attention_v3_kernel<128>(float const*, …)' for 'sm_90'
#       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
#   ptxas info    : Used 168 registers, used 1 barriers
cat "${reports[@]}" | c++filt | awk '
    /Compiling entry function/ {
        gsub(/\(anonymous namespace\)::/, "")
        match($0, /function \x27[^\x27(]+/); name = substr($0, RSTART + 10, RLENGTH - 10)
        sub(/^.*::/, "", name); sub(/_kernel</, "<", name); sub(/_kernel$/, "", name); gsub(/ /, "", name)
        match($0, /for \x27sm_[0-9]+/); arch = substr($0, RSTART + 5, RLENGTH - 5)
        kept = 1
    }
    kept && /bytes stack frame/ { stack = $1 + 0; stores = $5 + 0; loads = $9 + 0 }
    kept && /Used [0-9]+ registers/ {
        match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15) + 0
        printf "  %-32s %-6s %9d %7d B %8d B %8d B", name, arch, regs, stack, stores, loads
        tiled = name ~ /^(attention_v3|flash_)/
        if (tiled) n_tiled++
        n++
        if (tiled && stack + stores + loads > 0) { bad++; printf "   LOCAL MEMORY" }
        else if (stores + loads > 0) { bad++; printf "   SPILLS" }
        else if (regs >= 247) { close_calls++; printf "   AT THE LIMIT" }
        printf "\n"; kept = 0
    }
    BEGIN { printf "  %-32s %-6s %9s %9s %10s %10s\n", "kernel", "arch", "registers", "stack", "spill st", "spill ld" }
    END {
        if (n_tiled == 0) { print "check_spills: no attention_v3 or flash kernel in the reports"; exit 2 }
        if (bad) { printf "check_spills: %d kernel instantiation(s) spill or, tiled, use local memory (reports: %s/common/CMakeFiles/attn_gpu.dir/gpu/*.ptxas)\n", bad, dir; exit 1 }
        printf "no spills in %d kernel instantiations; attention_v3 and the flash kernels (%d) use no local memory, on every architecture built", n, n_tiled
        if (close_calls) printf "; %d within 8 registers of the limit", close_calls
        printf "\n"
    }' dir="$BUILD"
