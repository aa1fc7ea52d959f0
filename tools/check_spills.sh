#!/usr/bin/env bash
# tools/check_spills.sh [BUILD_DIR] — do the attention kernels fit in registers?
#
# Runs the build's own compile command for common/gpu/attention.cu (from ninja: the same flags, every
# architecture the build targets) with ptxas's report switched on (-Xptxas -v), keeps the report in
# BUILD_DIR/ptxas/attention.txt, prints registers, stack and spills per kernel and architecture, and fails
# if attention_v3 uses any local memory at any d_head: a spill (a value ptxas had no register for, parked
# off-chip) or a stack frame (an array indexed at run time, which registers cannot be). Local memory is
# as slow as global memory, and v3's point is to stay on-chip.
# Needs nvcc and a Ninja build that configured the CUDA targets (default BUILD_DIR: build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
OBJ=common/CMakeFiles/attn_gpu.dir/gpu/attention.cu.o
cmd=$(ninja -C "$BUILD" -t commands -s "$OBJ" 2>/dev/null | tail -1)
[[ "$cmd" == *nvcc* ]] || { echo "check_spills: no nvcc command for $OBJ in $BUILD (configured without CUDA?)" >&2; exit 2; }
# The same command, its object and dependency file sent elsewhere so the build's stay untouched.
mkdir -p "$BUILD/ptxas"
report="$BUILD/ptxas/attention.txt"
cmd=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -o [^ ]+$//' <<<"$cmd")
(cd "$BUILD" && eval "$cmd -Xptxas -v -o ptxas/attention.o") >"$report" 2>&1 ||
    { cat "$report" >&2; echo "check_spills: the compile failed" >&2; exit 2; }

# ptxas says, per kernel and architecture:
#   ptxas info    : Compiling entry function '_ZN…attention_v3_kernelILi128E…' for 'sm_90'
#       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
#   ptxas info    : Used 168 registers, used 1 barriers
awk '
    /Compiling entry function/ {
        match($0, /function \x27[^\x27]+\x27/); name = substr($0, RSTART + 10, RLENGTH - 11)
        match($0, /for \x27sm_[0-9]+/); arch = substr($0, RSTART + 5, RLENGTH - 5)
        if (match(name, /attention_v3_kernelILi[0-9]+E/)) name = "attention_v3<" substr(name, RSTART + 22, RLENGTH - 23) ">"
        else if (match(name, /[0-9]+attention_[a-z0-9_]+/)) { name = substr(name, RSTART, RLENGTH); sub(/^[0-9]+/, "", name) }
        else next
        kept = 1
    }
    kept && /bytes stack frame/ { stack = $1; stores = $5; loads = $9 }
    kept && /Used [0-9]+ registers/ {
        match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15)
        printf "  %-26s %-6s %9d %7d B %8d B %8d B", name, arch, regs, stack, stores, loads
        if (name ~ /^attention_v3/) {
            v3++
            if (stack + stores + loads > 0) { bad++; printf "   LOCAL MEMORY" }
        }
        printf "\n"; kept = 0
    }
    BEGIN { printf "  %-26s %-6s %9s %9s %10s %10s\n", "kernel", "arch", "registers", "stack", "spill st", "spill ld" }
    END {
        if (v3 == 0) { print "check_spills: no attention_v3 kernel in the report"; exit 2 }
        if (bad) { printf "check_spills: %d attention_v3 instantiation(s) use local memory (report: %s)\n", bad, report; exit 1 }
        printf "attention_v3: no spills and no stack at any d_head, on every architecture built (%d instantiations)\n", v3
    }' report="$report" "$report"
