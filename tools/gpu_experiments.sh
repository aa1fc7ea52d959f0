#!/usr/bin/env bash
# tools/gpu_experiments.sh — the chapter's trained experiments at its own setup (--full), on a lent GPU, in one
# prepared run that fits a time budget. Run it after tools/gpu_check.sh, which builds build-gpu-check/:
#
#   GPU_RUNS_OUT=$OUT tools/gpu_experiments.sh [--build DIR] [--budget S] [--only NAME]
#
# In order, each only if the budget left can hold it (the estimates below, from the step time bench_lm_train
# measured on an H200: 3.75 ms at the chapter's size):
#   ladder     12_language_model ladder --full --seeds 3 --device gpu   (9 models × 3000 steps a seed: decides C33, C14)
#   positions  12_language_model positions --full --device gpu          (4 models, evaluated at 1×, 2×, 4×: C29)
#   depth      12_language_model depth --full --device gpu              (one block and two: C37)
#   scale      12_language_model scale --full --device gpu              (the √d_k ablation, 6 models: C12; the scores
#                                                                        are read on the CPU from the trained weights)
#   norm       12_language_model norm --full --device gpu               (pre- and post-norm, with and without warmup: C24)
# (scale and norm from the CPU runs' times in docs/runs/ over the ladder's CPU-to-H200 ratio, with room.) Each run writes GPU_RUNS_OUT/NAME-full-gpu.txt — the command, the device,
# the wall time and the date, then everything the program printed — and NAME-full-gpu.svg beside it, named as
# docs/runs/'s CPU files are, ready to be committed under docs/runs/. A run past what is left of the budget is
# stopped (its file says so) and those after it are reported NOT RUN. Exit status: the number of runs that
# did not finish. --self-test checks the machinery (the budget, the file header) with a stand-in program.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD=build-gpu-check
BUDGET=420
ONLY=""
SELF_TEST=0
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD="$2"; shift 2 ;;
        --budget) BUDGET="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        --self-test) SELF_TEST=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
        *) echo "gpu_experiments: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
OUT="${GPU_RUNS_OUT:-$BUILD/gpu-runs}"
mkdir -p "$OUT"
PROGRAM="$BUILD/bin/12_language_model"
DEVICE_LINE=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true) | head -1)
if [ "$SELF_TEST" -eq 1 ]; then  # a stand-in for the program: prints its arguments, sleeps as asked, writes its --svg
    PROGRAM="$OUT/stand-in.sh"
    cat >"$PROGRAM" <<'EOF'
#!/usr/bin/env bash
echo "stand-in: $*"
svg=""; prev=""
for a in "$@"; do [ "$prev" = --svg ] && svg="$a"; prev="$a"; done
sleep "${STAND_IN_SLEEP:-0}"
[ -z "$svg" ] || echo "<svg/>" >"$svg"
EOF
    chmod +x "$PROGRAM"
    DEVICE_LINE="a stand-in"
fi
[ -x "$PROGRAM" ] || { echo "gpu_experiments: no $PROGRAM (build it first: tools/gpu_check.sh)" >&2; exit 2; }
START=$SECONDS
not_finished=0

# run NAME ESTIMATE_S ARGS…: the run, stopped at the budget's end; its output with a header into NAME-full-gpu.txt
run() {
    local name="$1" estimate="$2"
    shift 2
    [ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || return 0
    local left=$((BUDGET - (SECONDS - START)))
    local file="$OUT/$name-full-gpu.txt" svg="$OUT/$name-full-gpu.svg"
    if [ "$left" -lt "$estimate" ]; then
        echo "NOT RUN  $name: about $estimate s needed, $left s left of the budget"
        not_finished=$((not_finished + 1))
        return
    fi
    local t0=$SECONDS rc=0 body
    body=$(mktemp)
    timeout --kill-after=10 "$left" "$PROGRAM" "$name" --full --device gpu --svg "$svg" "$@" >"$body" 2>/dev/null || rc=$?
    local wall=$((SECONDS - t0)) status="finished"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status="STOPPED at the budget's end, after $wall s"; fi
    if [ "$rc" -ne 0 ] && [ "$status" = finished ]; then status="FAILED (exit $rc)"; fi
    {
        echo "Command: build/bin/12_language_model $name --full --device gpu --svg $name-full-gpu.svg${*:+ $*}"
        echo "Picture: $name-full-gpu.svg beside this file"
        echo "Device: GPU, ${DEVICE_LINE:-unknown}, fp32 (tools/gpu_experiments.sh)"
        echo "Wall time: $wall s ($status)"
        echo "Date: $(date -u +%Y-%m-%d)"
        echo
        cat "$body"
    } >"$file"
    rm -f "$body"
    printf '%-8s %s: %s, %d s -> %s\n' "$([ "$status" = finished ] && echo ok || echo FAILED)" "$name" "$status" "$wall" "$file"
    [ "$status" = finished ] || not_finished=$((not_finished + 1))
}

if [ "$SELF_TEST" -eq 1 ]; then
    BUDGET=3
    STAND_IN_SLEEP=0 run ladder 1 --seeds 3
    grep -q "^Command: build/bin/12_language_model ladder --full --device gpu --svg ladder-full-gpu.svg --seeds 3$" "$OUT/ladder-full-gpu.txt" ||
        { echo "self-test: the header's command line is wrong"; exit 1; }
    grep -q "^stand-in: ladder --full --device gpu --svg $OUT/ladder-full-gpu.svg --seeds 3$" "$OUT/ladder-full-gpu.txt" ||
        { echo "self-test: the program's output is not in the file"; exit 1; }
    [ -s "$OUT/ladder-full-gpu.svg" ] || { echo "self-test: no picture"; exit 1; }
    export STAND_IN_SLEEP=30
    run positions 1  # runs past the budget: stopped
    grep -q "STOPPED at the budget's end" "$OUT/positions-full-gpu.txt" || { echo "self-test: the run past the budget was not stopped"; exit 1; }
    run depth 60  # more than is left: not run
    [ ! -e "$OUT/depth-full-gpu.txt" ] || { echo "self-test: a run the budget cannot hold ran"; exit 1; }
    [ "$not_finished" -eq 2 ] || { echo "self-test: $not_finished runs counted as not finished, expected 2"; exit 1; }
    echo "gpu_experiments self-test: ok"
    exit 0
fi

echo "the chapter's experiments at --full on ${DEVICE_LINE:-the GPU}, budget $BUDGET s, into $OUT"
run ladder 330 --seeds 3
run positions 90
run depth 60
run scale 60
run norm 30
echo "$not_finished run(s) did not finish; commit the finished ones under docs/runs/ (and their lines in docs/runs/README.md)"
exit "$not_finished"
