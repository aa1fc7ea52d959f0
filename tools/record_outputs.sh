#!/usr/bin/env bash
# Records what every section program prints (stdout) and writes (its SVG and .npy files), at the sizes the
# tests use and at each program's defaults, to compare two versions of the code by their output:
#
#   tools/record_outputs.sh /tmp/before          # on one version
#   … change the code, rebuild …
#   tools/record_outputs.sh /tmp/after
#   diff -r /tmp/before /tmp/after               # byte-identical, except the changes you intend
#
# Every run is seeded (each program's default seed) and skips wall-clock figures where the program can
# (--no-timing), so two recordings of the same code are byte-identical. `--fast` records only the test
# sizes (about a minute after the build); without it the default runs are recorded too (about five).
# Uses the build in build/ as it is (or in $BUILD_DIR): build first (cmake --build --preset release).
source "$(dirname "$0")/common.sh"
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
out="${1:?usage: tools/record_outputs.sh [--fast] OUTDIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
bin="$ROOT/${BUILD_DIR:-build}/bin"  # BUILD_DIR=another-build records that build instead

# record NAME PROGRAM ARGS…: stdout to NAME.stdout, the files it writes to NAME/, the exit code to NAME.rc
record() {
    local name="$1" program="$2"
    shift 2
    local dir="$out/$name"
    rm -rf "$dir" && mkdir -p "$dir"
    local rc=0
    (cd "$dir" && "$bin/$program" "$@") >"$out/$name.stdout" 2>/dev/null || rc=$?
    echo "$rc" >"$out/$name.rc"
    printf '  %-40s exit %s\n' "$name" "$rc"
}

say "recording into $out"
# The test sizes (tests/programs/CMakeLists.txt's FAST_ arguments), default seed
record 01_averaging 01_averaging
record 02_soft_lookup 02_soft_lookup
record 03_scaling 03_scaling
record 04_learned_attention.fast 04_learned_attention --steps=60
record 05_multi_head.fast 05_multi_head --steps=60 --no-timing
record 06_masking 06_masking
record 07_ffn 07_ffn
record 08_normalization.quick 08_normalization --quick
record 09_positions 09_positions
record 10_block.fast 10_block --steps=60 --no-timing
record 10_block.dump 10_block --steps=1 --no-timing --dump dump
record 12_language_model.quick 12_language_model all --quick
record 12_language_model.norm30 12_language_model norm --quick --steps=30 --seed=7
# The mistakes a learner's --mine run shows (the untouched stubs)
record 02_soft_lookup.mine 02_soft_lookup --mine
[ "$fast" -eq 1 ] && exit 0

# The defaults, as the tour runs them
record 04_learned_attention 04_learned_attention
record 05_multi_head 05_multi_head --no-timing
record 08_normalization 08_normalization
record 10_block 10_block --no-timing
