#!/usr/bin/env bash
# tools/gpu_run.sh --dry-run, checked as the GPU machine's run will be read: what comes back (at most 8 files,
# these three), the summary's lines, each run file's header, no absolute path of this machine; and the budget at
# work: with a ladder seed estimated at 200 s of a 300 s budget the ladder (two seeds, 400 s) is left out, and
# the experiments after it still run, in order. Usage: gpu_run_dry.sh ROOT BUILD SCRATCH
set -uo pipefail
root="$1" build="$2" scratch="$3"
bad=0
fail() { echo "FAIL: $*"; bad=1; }
rm -rf "$scratch" && mkdir -p "$scratch"
cd "$root" || exit 1

out="$scratch/all"
tools/gpu_run.sh --dry-run --build "$build" --out "$out" --budget 300 >"$scratch/all.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$scratch/all.txt"; fail "the dry run with room for everything exits $rc"; }
files=$(cd "$out" && ls | tr '\n' ' ')
[ "$files" = "gpu_run.log runs.tar.gz summary.txt " ] || fail "--out holds '$files', not the three files"
for want in "1\. checks .* ok" "2\. bench: eager fp32 .* ok .* tokens/s [0-9]+" "2\. bench: CUDA Graphs .* ok" "2\. bench: TF32 and graphs .* ok" \
            "3\. ladder .* finished" "3\. depth .* finished" "3\. positions .* finished" "3\. scale .* finished" "3\. norm .* finished" \
            "every phase and experiment finished"; do
    grep -Eq "$want" "$out/summary.txt" || fail "summary.txt has no line matching '$want'"
done
mkdir -p "$scratch/runs" && tar -xzf "$out/runs.tar.gz" -C "$scratch/runs" || fail "runs.tar.gz does not unpack"
for name in ladder depth positions scale norm; do
    f="$scratch/runs/$name-full-gpu.txt"
    [ -s "$scratch/runs/$name-full-gpu.svg" ] || fail "no $name-full-gpu.svg in runs.tar.gz"
    head -1 "$f" 2>/dev/null | grep -q "^Command: build/bin/12_language_model $name --quick --device cpu --svg $name-full-gpu.svg" ||
        fail "$name-full-gpu.txt does not start with its command line"
    grep -q "^Wall time: [0-9]* s (finished)" "$f" || fail "$name-full-gpu.txt has no wall time"
    grep -q "verdicts:" "$f" || fail "$name-full-gpu.txt does not hold the program's output"
done
grep -q "stderr of ladder:" "$out/gpu_run.log" || fail "the log does not keep the programs' stderr"
grep -q "^==> a slow step" "$out/gpu_run.log" || fail "the log does not end with gpu_check.sh's whole log"
for abs in "$root" "$out" "$(cd "$out" && pwd -P)"; do
    for f in "$out"/*.log "$out/summary.txt"; do
        ! grep -qF "$abs" "$f" || fail "$(basename "$f") names the absolute path $abs"
    done
done

out="$scratch/tight"
GPU_RUN_LADDER_SEED_S=200 tools/gpu_run.sh --dry-run --build "$build" --out "$out" --budget 300 >"$scratch/tight.txt" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$scratch/tight.txt"; fail "with the ladder left out the exit status is $rc, not 1"; }
grep -Eq "3\. ladder .* NOT RUN .* about 400 s needed" "$out/summary.txt" || fail "the ladder (400 s of a 300 s budget) was not left out"
grep -Eq "3\. depth .* finished" "$out/summary.txt" || fail "depth (212 s) did not run after the ladder was left out"
[ "$(find "$out" -type f | wc -l)" -le 8 ] || fail "more than 8 files in --out"

# The GPU path on a machine without one (nvidia-smi pointed at nothing): gpu_check.sh's preflight sees no GPU, nothing
# else runs, the summary says so, and the run exits 77 (skipped), its three files written all the same.
out="$scratch/no-gpu"
NVIDIA_SMI=/nonexistent/nvidia-smi tools/gpu_run.sh --out "$out" --budget 60 >"$scratch/no-gpu.txt" 2>&1
rc=$?
[ "$rc" -eq 77 ] || { cat "$scratch/no-gpu.txt"; fail "without a GPU the run exits $rc, not 77"; }
grep -Eq "NOT RUN: no GPU seen" "$out/summary.txt" || fail "without a GPU the summary does not say so"
[ "$(cd "$out" && ls | tr '\n' ' ')" = "gpu_run.log runs.tar.gz summary.txt " ] || fail "without a GPU the three files are not written"

# A second run into a folder that is not empty is refused: what comes back must be one run's.
tools/gpu_run.sh --dry-run --build "$build" --out "$out" --budget 300 >/dev/null 2>&1
[ $? -eq 2 ] || fail "a non-empty --out is not refused with exit 2"
[ "$bad" -eq 0 ] && echo "gpu_run.sh --dry-run: ok (three files, nine steps, run files headed, no absolute paths; the budget leaves the ladder out)"
exit "$bad"
