#!/usr/bin/env bash
# tools/gpu_run.sh — the one command a lent GPU machine runs: every check, the step's speed, then the chapter's
# trained experiments at its own setup, all inside one time budget.
#
#   tools/gpu_run.sh --out "$OUT" [--budget S] [--build DIR] [--debs DIR]     on the GPU machine
#   tools/gpu_run.sh --dry-run --out DIR [--budget S] [--build DIR]            here, without a GPU (a ctest runs it)
#
# Three phases, in this order, one budget (--budget, default 540 s, machine start not included) across them:
#   1. checks       tools/gpu_check.sh: the build (all cores), the device tests, compute-sanitizer, the spill
#                   check, 11_gpu_block, PyTorch's attention, the training benches. It may spend at most
#                   CHECK_SHARE % of the budget (45: 243 s of 540; its runs kept in docs/gpu/ took 70-128 s).
#   2. bench        bench_lm_train throughput at the chapter's size (width 128, context 128, batch 64, the BPE's
#                   1024 tokens): eager fp32, CUDA Graphs, TF32 with graphs. tokens/s each; the clock stops after the
#                   device has finished (train_loop waits for it).
#   3. experiments  12_language_model NAME --full --device gpu, in the order that matters most: the ladder at three
#                   seeds (C33, C14; its spread is what the runs of one seed are judged by), depth at three seeds
#                   (C37), positions (C29), scale (C12), norm (C24). Each starts only if its estimate fits in what
#                   is left: phase 2's eager fp32 rate (what the experiments train with) gives a ladder seed's
#                   time, 9 models x 3000 steps x 8,192 tokens (every rung costed as the full block: an upper
#                   bound), and the others are that time times the ratio their CPU runs in docs/runs/ show to a
#                   ladder seed there (depth's three seeds 1.06, positions 0.39, scale 0.38, norm 1.10), with
#                   a quarter more for evaluation and start-up. A run past the budget is stopped and says so.
# What comes back: at most 8 files in --out (the device returns no more), here three:
#   gpu_run.log     the whole log: every phase's output, every program's stderr (progress bars folded), and at its
#                   end phase 1's own log (tools/gpu_check.sh's gpu_check.log)
#   summary.txt     one line a step: status and seconds, tokens/s of each bench, each experiment's wall time
#   runs.tar.gz     each experiment's NAME-full-gpu.txt (headed by its command, device, wall time and date, as
#                   docs/runs/'s files are) and NAME-full-gpu.svg, ready for docs/runs/
# No absolute path of the machine in them: the repository is `.`, --out is `$OUT`.
# Exit status: the number of phases or experiments that did not finish (0: all did); 77 where no GPU is seen.
#
# --dry-run proves the plumbing here, without a GPU: the same phases, budget arithmetic, file names and count,
# with stand-ins. Phase 1 is gpu_check.sh --self-test; phases 2 and 3 run this machine's build (--build, default
# build/) on the CPU at the test sizes (bench_lm_train at its default size, 12_language_model NAME --quick for 40
# steps, fewer seeds). GPU_RUN_LADDER_SEED_S=N sets the estimate of a ladder seed, to see the budget at work.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

BUDGET=540
CHECK_SHARE=45
OUT_DIR=""
BUILD=""
DEBS=.gpu-debs
DRY=0
while [ $# -gt 0 ]; do
    case "$1" in
        --budget) BUDGET="$2"; shift 2 ;;
        --out) OUT_DIR="$2"; shift 2 ;;
        --build) BUILD="$2"; shift 2 ;;
        --debs) DEBS="$2"; shift 2 ;;
        --dry-run) DRY=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_run: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$OUT_DIR" ] || { echo "gpu_run: --out DIR is required (on the GPU machine: --out \"\$OUT\")" >&2; exit 2; }
[[ "$BUDGET" =~ ^[0-9]+$ ]] && [ "$BUDGET" -ge 60 ] || { echo "gpu_run: --budget must be a whole number of seconds, at least 60, got '$BUDGET'" >&2; exit 2; }
mkdir -p "$OUT_DIR" || exit 1
OUT_DIR="$(cd "$OUT_DIR" && pwd)"  # --out and --build as the caller wrote them, from the caller's folder
[ -z "$BUILD" ] || BUILD="$(mkdir -p "$BUILD" && cd "$BUILD" && pwd)"
cd "$ROOT"
[ -z "$(ls -A "$OUT_DIR")" ] || { echo "gpu_run: --out $OUT_DIR is not empty (what the device returns must be this run's alone)" >&2; exit 2; }
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
mkdir -p "$SCRATCH/runs"
LOG="$OUT_DIR/gpu_run.log"
SUMMARY="$OUT_DIR/summary.txt"
: >"$LOG"
START=$SECONDS
left() { local s=$((BUDGET - (SECONDS - START))); echo $((s > 1 ? s : 1)); }
log() { printf '%s\n' "$*" | tee -a "$LOG"; }
lines=()      # the summary's step lines
unfinished=0  # phases and experiments that did not finish

if [ "$DRY" -eq 1 ]; then
    BUILD=${BUILD:-build}
    BIN=$BUILD/bin
    MODE="dry run on the CPU (stand-ins for the device, the test sizes)"
    DEVICE_FLAG=(--device cpu)
    SIZE_FLAG=--quick
    RUN_FLAGS=(--steps 40)                   # a few steps of the --quick models: seconds, not minutes
    SEED_STEPS=40 SEED_TOKENS=$((16 * 32))   # a --quick ladder model: 16 x 32 tokens a step
    LADDER_SEEDS=2 ONE_SEED=(--seeds 1)
else
    BUILD=${BUILD:-build-gpu-check}
    BIN=$BUILD/bin
    MODE="GPU: $( (nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo unknown) | head -1)"
    DEVICE_FLAG=(--device gpu)
    SIZE_FLAG=--full
    RUN_FLAGS=()
    SEED_STEPS=3000 SEED_TOKENS=$((64 * 128))  # the chapter's: 3000 steps of 64 x 128 tokens
    LADDER_SEEDS=3 ONE_SEED=()                 # --full's own default is one seed
fi
log "gpu_run: $(date -u '+%Y-%m-%d %H:%M UTC'), budget $BUDGET s; $MODE; $(nproc) cores"

# --- 1. checks --------------------------------------------------------------------------------------------------------
check_budget=$((BUDGET * CHECK_SHARE / 100))
log ""
log "==> 1. checks: tools/gpu_check.sh, at most $check_budget s"
t0=$SECONDS rc=0
if [ "$DRY" -eq 1 ]; then
    GPU_CHECK_OUT="$SCRATCH/check" tools/gpu_check.sh --self-test >>"$LOG" 2>&1 || rc=$?
else
    # its own budget ends its steps; the outer limit only stops a set-up that hangs, after the summary is written
    GPU_CHECK_OUT="$SCRATCH/check" timeout -k 10 "$((check_budget + 30))" tools/gpu_check.sh --build "$BUILD" --debs "$DEBS" \
        --budget "$check_budget" >>"$LOG" 2>&1 || rc=$?
fi
status=$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc: its summary above, its whole log at the end of this one)")
[ "$rc" -eq 0 ] || unfinished=$((unfinished + 1))
lines+=("$(printf '%-44s %-20s %5d s' "1. checks ($([ "$DRY" -eq 1 ] && echo "dry run: gpu_check.sh --self-test" || echo tools/gpu_check.sh))" "${status%% (*}" $((SECONDS - t0)))")
log "<== checks: $status, $((SECONDS - t0)) s"

# No GPU seen (gpu_check.sh's 77): nothing more can run; the summary says so and the run exits 77 (skipped).
no_gpu=0
if [ "$DRY" -eq 0 ] && [ "$rc" -eq 77 ]; then
    no_gpu=1
    lines+=("$(printf '%-44s %-20s %5d s' "2. bench, 3. experiments" "NOT RUN: no GPU seen" 0)")
    log "<== no GPU seen: the bench and the experiments are not run"
fi
if [ "$no_gpu" -eq 0 ]; then
# The GPU build links the libraries gpu_check.sh unpacked from the .debs into $BUILD/prefix (OpenBLAS and what it
# needs, libgfortran and libquadmath, which such a machine lacks): its programs find them as its steps do.
if [ "$DRY" -eq 0 ]; then
    libdir=$(ls -d "$BUILD"/prefix/usr/lib/*-linux-gnu 2>/dev/null | head -1)
    blasdir=$(ls -d "$libdir"/openblas-pthread "$libdir"/openblas-openmp "$libdir"/openblas-serial 2>/dev/null | head -1)
    [ -z "$libdir" ] || export LD_LIBRARY_PATH="$libdir${blasdir:+:$blasdir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    { echo "    the libraries bench_lm_train links:"; ldd "$BIN/bench_lm_train" 2>&1 | grep -E 'blas|gfortran|quadmath|cublas|not found' | sed 's/^/    | /'; } >>"$LOG"
fi

# --- 2. bench: tokens/s at the chapter's size --------------------------------------------------------------------------
# bench NAME FLAGS…: one bench_lm_train throughput run; its tokens/s into the summary (and into $rate for eager)
rate=0
bench() {
    local name="$1"; shift
    local t0=$SECONDS rc=0 out tps
    out=$(timeout -k 10 "$(left)" "$BIN/bench_lm_train" throughput "$@" 2>&1) || rc=$?
    printf '%s\n' "$out" >>"$LOG"
    tps=$(grep -oE 'tokens/s [0-9]+' <<<"$out" | tail -1 | cut -d' ' -f2)
    if [ "$rc" -ne 0 ] || [ -z "$tps" ]; then
        unfinished=$((unfinished + 1))
        lines+=("$(printf '%-44s %-20s %5d s' "2. bench: $name" "FAILED (exit $rc)" $((SECONDS - t0)))")
        log "<== bench $name: FAILED (exit $rc)"
        return
    fi
    lines+=("$(printf '%-44s %-20s %5d s   tokens/s %s' "2. bench: $name" ok $((SECONDS - t0)) "$tps")")
    log "<== bench $name: tokens/s $tps"
    [ "$name" != "eager fp32" ] || rate=$tps
}
log ""
log "==> 2. bench: bench_lm_train throughput, eager fp32, CUDA Graphs, TF32 with graphs"
if [ "$DRY" -eq 1 ]; then  # the CPU has no graphs or TF32: the same run stands in for each
    for name in "eager fp32" "CUDA Graphs" "TF32 and graphs"; do bench "$name" --steps 3 "${DEVICE_FLAG[@]}"; done
else
    bench "eager fp32" --full --vocab 1024 --steps 50 "${DEVICE_FLAG[@]}"
    bench "CUDA Graphs" --full --vocab 1024 --steps 50 --graph "${DEVICE_FLAG[@]}"
    bench "TF32 and graphs" --full --vocab 1024 --steps 50 --graph --tf32 "${DEVICE_FLAG[@]}"
fi

# --- 3. experiments ---------------------------------------------------------------------------------------------------
# A ladder seed's seconds, from the eager rate: 9 models x steps x tokens, each costed as the full block; then a
# quarter more for evaluation and start-up. (No rate: every experiment is reported NOT RUN.)
seed_s=0
[ "$rate" -le 0 ] || seed_s=$(( (9 * SEED_STEPS * SEED_TOKENS / rate) * 5 / 4 + 1 ))
seed_s=${GPU_RUN_LADDER_SEED_S:-$seed_s}  # a test sets it, to see the budget leave experiments out
log ""
log "==> 3. experiments: 12_language_model NAME $SIZE_FLAG ${DEVICE_FLAG[*]}; a ladder seed estimated at $seed_s s ($rate tokens/s)"
# experiment NAME RATIO_PERCENT ARGS…: estimate = a ladder seed x RATIO_PERCENT / 100; run only if it fits
experiment() {
    local name="$1" ratio="$2"; shift 2
    local estimate=$((seed_s * ratio / 100)) room
    room=$(left)
    local file="$SCRATCH/runs/$name-full-gpu.txt" svg="$name-full-gpu.svg"
    if [ "$seed_s" -eq 0 ] || [ "$room" -lt "$estimate" ] || [ "$room" -lt 5 ]; then
        local why="about $estimate s needed, $room s left"
        [ "$seed_s" -ne 0 ] || why="no eager rate was measured to estimate it"
        unfinished=$((unfinished + 1))
        lines+=("$(printf '%-44s %-20s %5d s   %s' "3. $name" "NOT RUN" 0 "$why")")
        log "<== $name: NOT RUN ($why)"
        return
    fi
    set -- "$@" ${RUN_FLAGS[@]+"${RUN_FLAGS[@]}"}
    local t0=$SECONDS rc=0 command="build/bin/12_language_model $name $SIZE_FLAG ${DEVICE_FLAG[*]} --svg $svg${*:+ $*}" program
    program="$(cd "$BIN" 2>/dev/null && pwd)/12_language_model"
    log "    $command (estimate $estimate s, $room s left)"
    (cd "$SCRATCH/runs" && timeout -k 10 "$room" "$program" "$name" "$SIZE_FLAG" "${DEVICE_FLAG[@]}" --svg "$svg" "$@" \
        >"$file.body" 2>"$file.err") || rc=$?
    local wall=$((SECONDS - t0)) status=finished
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status="STOPPED at the budget's end, after $wall s"
    elif [ "$rc" -ne 0 ]; then status="FAILED (exit $rc)"; fi
    {
        echo "Command: $command"
        echo "Picture: $svg beside this file"
        echo "Device: $MODE (tools/gpu_run.sh)"
        echo "Wall time: $wall s ($status)"
        echo "Date: $(date -u +%Y-%m-%d)"
        echo
        cat "$file.body"
    } >"$file"
    # stderr, with each progress bar's redraws folded into its last state
    { echo "    stderr of $name:"; tr '\r' '\n' <"$file.err" | grep -v '^[[:space:]]*$' |
        awk '/%\|/ { bar = $0; next } { if (bar != "") print bar; bar = ""; print } END { if (bar != "") print bar }' |
        sed 's/^/    | /'; } >>"$LOG"
    rm -f "$file.body" "$file.err"
    [ "$status" = finished ] || unfinished=$((unfinished + 1))
    lines+=("$(printf '%-44s %-20s %5d s   estimate %d s' "3. $name" "${status%%,*}" "$wall" "$estimate")")
    log "<== $name: $status, $wall s"
}
experiment ladder $((100 * LADDER_SEEDS)) --seeds "$LADDER_SEEDS"
experiment depth 106 --seeds "$LADDER_SEEDS"
experiment positions 39 ${ONE_SEED[@]+"${ONE_SEED[@]}"}
experiment scale 38 ${ONE_SEED[@]+"${ONE_SEED[@]}"}
experiment norm 110 ${ONE_SEED[@]+"${ONE_SEED[@]}"}
fi

# --- what comes back -----------------------------------------------------------------------------------------------------
runs=$(cd "$SCRATCH/runs" && ls)
tar -czf "$OUT_DIR/runs.tar.gz" -C "$SCRATCH/runs" . || { log "gpu_run: could not write runs.tar.gz"; unfinished=$((unfinished + 1)); }
{
    echo "gpu_run: $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - START)) s of a $BUDGET s budget; $MODE"
    printf '  %s\n' "${lines[@]}"
    [ "$unfinished" -eq 0 ] && echo "  every phase and experiment finished" || echo "  $unfinished phase(s) or experiment(s) did not finish"
    echo "runs.tar.gz: $(echo $runs)"
    [ ! -f "$SCRATCH/check/summary.txt" ] || { echo "tools/gpu_check.sh's summary:"; sed 's/^/  /' "$SCRATCH/check/summary.txt"; }
} >"$SUMMARY"
log ""
cat "$SUMMARY" >>"$LOG"
{ echo; echo "==> phase 1's whole log (tools/gpu_check.sh's gpu_check.log)"; cat "$SCRATCH/check/gpu_check.log" 2>/dev/null || echo "(none written)"; } >>"$LOG"
# No absolute path of this machine in what comes back: --out as $OUT, the scratch folder as <scratch>, the repository
# as ., each as pwd and pwd -P spell it, a path only where it ends (gpu_check.sh's scrub, the same way).
scrub=()
scrub_path() {  # scrub_path PATH PLACEHOLDER
    local esc
    esc=$(printf '%s' "$1" | sed 's#[][\\.*^$|]#\\&#g')
    scrub+=(-e "s|${esc}\([^A-Za-z0-9._+-]\)|$2\\1|g" -e "s|${esc}\$|$2|")
}
scrub_both() {  # scrub_both PATH PLACEHOLDER: as given and, where it differs, as pwd -P spells it
    local physical
    scrub_path "$1" "$2"
    physical=$(cd "$1" 2>/dev/null && pwd -P) || physical=$1
    [ "$physical" = "$1" ] || scrub_path "$physical" "$2"
}
scrub_both "$OUT_DIR" '$OUT'  # the more specific first: --out may lie inside the repository
scrub_both "$SCRATCH" '<scratch>'
scrub_both "$ROOT" .
for f in "$LOG" "$SUMMARY"; do sed -i "${scrub[@]}" "$f"; done
n_files=$(find "$OUT_DIR" -type f | wc -l)
[ "$n_files" -le 8 ] || { echo "gpu_run: $n_files files in --out; the device returns 8 at most" | tee -a "$LOG"; unfinished=$((unfinished + 1)); }
cat "$SUMMARY"
[ "$no_gpu" -eq 0 ] || exit 77
exit "$unfinished"
