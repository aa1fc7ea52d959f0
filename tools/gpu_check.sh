#!/usr/bin/env bash
# tools/gpu_check.sh — every GPU check of the project (Section 9.8), as one prepared run on a lent GPU
# machine that has the CUDA toolkit (nvcc), CMake, ninja and PyTorch but none of our Debian packages and
# no network. Two steps:
#
#   1. Here, on a Debian 12 (bookworm) machine with network, from the repository root:
#          tools/gpu_check.sh --fetch
#      downloads with `apt-get download` the .deb files of what the build needs and such a machine lacks —
#      one for each find_package of CMakeLists.txt: xtl (xtl-dev), xtensor (libxtensor-dev),
#      nlohmann_json (nlohmann-json3-dev, which xtensor also depends on), xtensor-blas (libxtensor-blas-dev), BLAS (OpenBLAS:
#      libopenblas-dev, libopenblas-pthread-dev, libopenblas0, libopenblas0-pthread, and its runtime libraries
#      libgfortran5, libquadmath0), Catch2 (catch2), rapidcheck (librapidcheck-dev) and CLI11 (libcli11-dev) — into .gpu-debs/ (ignored by
#      git). Carry that folder to the GPU machine with the working tree (about 14 MiB). FETCH_PACKAGES below
#      is the list; tools/check_gpu_packages.sh (a ctest) holds it to the find_package calls.
#
#   2. There, from the repository root:
#          tools/gpu_check.sh                          (or GPU_CHECK_OUT=$OUT tools/gpu_check.sh on a remote runner)
#      starts with a preflight — the GPU's name and driver (nvidia-smi), nvcc's and g++'s versions, where
#      cuBLAS is — and stops there, exit 77, if no GPU is seen. Then it unpacks the .debs with `dpkg -x`
#      into a private prefix (build-gpu-check/prefix; nothing is installed on the system), does by hand
#      what the packages' maintainer scripts would (the update-alternatives links that name OpenBLAS
#      libblas/liblapack/libopenblas), configures a GPU build in build-gpu-check/ against that prefix alone
#      with CMAKE_CUDA_ARCHITECTURES=90, checks that CMake found every package in the prefix (each cache
#      variable of PREFIX_CHECK_VARS below: xtl_DIR, xtensor_DIR, xtensor-blas_DIR, BLAS_openblas_LIBRARY,
#      nlohmann_json_DIR, Catch2_DIR, CLI11_DIR, rapidcheck_DIR), builds the GPU targets (-j16), and runs:
#        - tools/check_spills.sh: ptxas's report on the inference and training kernels, kept by the build: no spills, and no local
#          memory in attention_v3 and the flash kernels;
#        - gpu_tests: every kernel (attention v1/v2/v3, LayerNorm, GELU, linear, adds) and the block and a
#          stack of blocks against the CPU library, outputs NaN-poisoned first; out-of-memory handling;
#        - compute-sanitizer memcheck and racecheck on `gpu_tests --quick` (the small shapes);
#        - gpu_solution_tests: the GPU exercises 11.1–11.3 on their reference answers, and
#          gpu_exercise_tests: each exercise's test fails on its untouched stub with the stub's message;
#        - 11_gpu_block: CPU and GPU side by side, then the n² table up to --max-T tokens (v1 and v2 run out
#          of memory past 65,536 tokens on a 141 GB H200, v3 goes on), and again as the chapter's 8 GB card
#          (--device-mb 8192);
#        - tools/torch_sdpa.py: PyTorch's scaled_dot_product_attention (fp32, causal) at the same shapes;
#        - training on the GPU (GpuModel): bench_lm_train's tokens/s at the chapter's size with the BPE
#          vocabulary of 1024, one step's phases (forward, backward, update) and kernel launches, eager and as
#          CUDA Graphs, TF32's loss gap to the CPU and its speed beside fp32, and whether the graphs keep every
#          bit (bench_lm_train precision), and the --full
#          ladder's projected time, then 12_language_model ladder --quick
#          --device gpu and 10_block --device gpu (gpu_tests already held 20 training steps to the CPU's losses).
#      One time budget (--budget, default 400 s) holds across every step, the build included: each step's
#      own limit is cut to what is left, a step past its limit is killed with its whole process group (the
#      test binary and anything it started), and the steps after the budget are reported NOT RUN — so the
#      run ends within 7 minutes whatever happens (70–128 s in the runs kept in docs/gpu/, 16 cores and one H200).
#      Output: each step's full output goes to GPU_CHECK_OUT/gpu_check.log (default build/gpu-check/),
#      the step table to GPU_CHECK_OUT/summary.txt; the terminal gets one line per step, the last lines of
#      any step that failed, and the summary — well within the 12,000 characters a remote run returns.
#      The log and the summary name no absolute path of the machine they ran on: the repository root is
#      written `.` (./build-gpu-check/prefix/...), GPU_CHECK_OUT, where it is set, `$GPU_CHECK_OUT`, and
#      --build and --debs outside the repository <build> and <debs>, so they can be kept in docs/gpu/ as
#      they are.
#      Exit status: the number of failed steps (0: everything passed; 77: no GPU).
#
# Options (step 2): --arch N (CMAKE_CUDA_ARCHITECTURES, default 90), --jobs N (default: all cores),
#   --max-T N (last row of the tables, default 131072), --build DIR (default build-gpu-check),
#   --debs DIR (default .gpu-debs), --budget S (seconds for the whole run, default 400; 0: no budget),
#   --no-cuda (no GPU: configure with -DATTN_CUDA=OFF against the prefix, build the unit tests and run the
#   GPU module's CPU-side tests — how step 2's set-up is tested on a machine without a GPU; no budget by
#   default), --self-test (no build, no GPU: checks this script's own machinery — the preflight's no-GPU
#   answer, the log and summary files and that they name no absolute path of the repository or of
#   GPU_CHECK_OUT, the budget, and that a step past its limit is killed with its children; a ctest runs it).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
exec 2>&1  # everything to stdout, in order

# The .debs --fetch downloads: the package behind each find_package of the build, and what those need to
# build and run. tools/check_gpu_packages.sh (a ctest) fails when a find_package has no package here.
FETCH_PACKAGES=(xtl-dev libxtensor-dev libxtensor-blas-dev nlohmann-json3-dev catch2 libcli11-dev librapidcheck-dev
                libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread libgfortran5 libquadmath0)
# For each find_package, the CMake cache variable that says where it found the package; after configuring,
# each must lie in the prefix the .debs were unpacked into (tools/check_gpu_packages.sh holds this list to the
# find_package calls too).
PREFIX_CHECK_VARS=(xtl_DIR xtensor_DIR xtensor-blas_DIR nlohmann_json_DIR BLAS_openblas_LIBRARY Catch2_DIR CLI11_DIR rapidcheck_DIR)
mode=run
ARCH=90
JOBS=$(nproc 2>/dev/null || echo 4)
MAX_T=131072
BUILD=build-gpu-check
DEBS=.gpu-debs
NO_CUDA=0
SELF_TEST=0
BUDGET=""
OUT_DIR="${GPU_CHECK_OUT:-build/gpu-check}"
NVIDIA_SMI="${NVIDIA_SMI:-nvidia-smi}"  # the self-test points it at nothing, to take the no-GPU path

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --fetch) mode=fetch ;;
        --arch) ARCH="$2"; shift ;;
        --jobs) JOBS="$2"; shift ;;
        --max-T) MAX_T="$2"; shift ;;
        --build) BUILD="$2"; shift ;;
        --debs) DEBS="$2"; shift ;;
        --no-cuda) NO_CUDA=1 ;;
        --budget) BUDGET="$2"; shift ;;
        --self-test) SELF_TEST=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "gpu_check: unknown option '$1'"; echo; usage; exit 2 ;;
    esac
    shift
done

say() { printf '\n==> %s\n' "$*"; }

# --- step 1: fetch the .debs (here, with network) ---------------------------------------------------------------
if [ "$mode" = fetch ]; then
    command -v apt-get >/dev/null || { echo "gpu_check --fetch: needs apt-get (a Debian machine)"; exit 1; }
    mkdir -p "$DEBS"
    rm -f "$DEBS"/*.deb
    say "apt-get download ${FETCH_PACKAGES[*]}  →  $DEBS/"
    # apt-get download writes into the current directory; as root it warns that its sandbox user cannot
    # write there, and downloads anyway.
    (cd "$DEBS" && apt-get download "${FETCH_PACKAGES[@]}") || { echo "gpu_check --fetch: apt-get download failed"; exit 1; }
    for p in "${FETCH_PACKAGES[@]}"; do
        ls "$DEBS"/"${p}"_*.deb >/dev/null 2>&1 || { echo "gpu_check --fetch: $p was not downloaded"; exit 1; }
    done
    ls -l "$DEBS"
    echo "$(ls "$DEBS"/*.deb | wc -l) packages, $(du -sh "$DEBS" | cut -f1) in $DEBS/ — carry it to the GPU machine and run tools/gpu_check.sh there"
    exit 0
fi

# --- step 2: on the GPU machine ------------------------------------------------------------------------------------
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
LOG="$OUT_DIR/gpu_check.log"
SUMMARY="$OUT_DIR/summary.txt"
: >"$LOG"
# No absolute path of this machine in what the run writes: `scrub` (a filter) writes --build and --debs, where
# they lie outside the repository, as <build> and <debs>, GPU_CHECK_OUT, where it is set, as $GPU_CHECK_OUT, and
# the repository root as `.`, each as `pwd` and as `pwd -P` spell it (CMake prints the physical path). The
# more specific first: GPU_CHECK_OUT may lie inside the repository. A path only goes when whole: the root /a/b
# leaves /a/bc alone.
SCRUB_ARGS=()
scrub_path() {  # scrub_path PATH PLACEHOLDER
    local path="$1" esc
    [ -n "$path" ] && [ "$path" != / ] || return 0
    esc=$(printf '%s' "$path" | sed 's#[][\\.*^$|]#\\&#g')  # literal in a regex whose delimiter is |
    SCRUB_ARGS+=(-e "s|${esc}\([^A-Za-z0-9._+-]\)|$2\\1|g" -e "s|${esc}\$|$2|")
}
scrub_dir() {  # scrub_dir DIR PLACEHOLDER: DIR (an option's value), where it lies outside the repository
    local p
    for p in "$(realpath -m -- "$1" 2>/dev/null)" "${1%/}"; do
        case "$p" in /*) ;; *) continue ;; esac
        case "$p/" in "$ROOT"/*|"$(pwd -P)"/*) ;; *) scrub_path "$p" "$2" ;; esac
    done
}
scrub_dir "$BUILD" '<build>'
scrub_dir "$DEBS" '<debs>'
if [ -n "${GPU_CHECK_OUT:-}" ]; then
    scrub_path "$OUT_DIR" '$GPU_CHECK_OUT'
    [ "$(cd "$OUT_DIR" && pwd -P)" = "$OUT_DIR" ] || scrub_path "$(cd "$OUT_DIR" && pwd -P)" '$GPU_CHECK_OUT'
fi
scrub_path "$ROOT" .
[ "$(pwd -P)" = "$ROOT" ] || scrub_path "$(pwd -P)" .
scrub() { if [ ${#SCRUB_ARGS[@]} -gt 0 ]; then sed "${SCRUB_ARGS[@]}"; else cat; fi; }
# The terminal gets what `say` and `note` print; the log gets that and every step's whole output (whose paths
# `finish` scrubs).
note() { printf '%s\n' "$*" | scrub | tee -a "$LOG"; }
say() { printf '\n==> %s\n' "$*" | scrub | tee -a "$LOG"; }

START=$SECONDS
[ -n "$BUDGET" ] || { [ "$NO_CUDA" -eq 1 ] && BUDGET=0 || BUDGET=400; }
MIN_LEFT=${MIN_LEFT:-10}  # a step starts only with this many seconds of the budget left
failed=0
results=()
# step NAME LIMIT COMMAND...: runs COMMAND (a program, or a function of this script run in a child bash)
# with its output in the log, under `timeout`, which puts it in a process group of its own and, past LIMIT
# seconds — its own, cut to what is left of the budget — sends TERM to the whole group, and KILL 10 s
# later: a test binary and whatever it started die together. Reports the status and time, counts failures.
step() {
    local name="$1" limit="$2"; shift 2
    if [ "$BUDGET" -gt 0 ]; then
        local left=$((BUDGET - (SECONDS - START)))
        if [ "$left" -lt "$MIN_LEFT" ]; then
            failed=$((failed + 1))
            results+=("$(printf '%-62s %-24s %4d s' "$name" "NOT RUN: out of time" 0)")
            note "<== $name: NOT RUN (the ${BUDGET} s budget is spent)"
            return
        fi
        [ "$limit" -le "$left" ] || limit=$left
    fi
    printf '\n==> %s\n' "$name" >>"$LOG"
    local t0=$SECONDS rc=0 mark
    mark=$(wc -l <"$LOG")
    if declare -F "$1" >/dev/null; then
        timeout -k 10 "$limit" bash -c "$(declare -f "$1"); $(declare -p ROOT BUILD MAX_T); $*" </dev/null >>"$LOG" 2>&1 || rc=$?
    else
        timeout -k 10 "$limit" "$@" </dev/null >>"$LOG" 2>&1 || rc=$?
    fi
    local status="ok"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status="TIMED OUT after ${limit} s"
    elif [ "$rc" -eq 77 ]; then status="FAILED: no GPU seen (77)"
    elif [ "$rc" -ne 0 ]; then status="FAILED (exit $rc)"; fi
    results+=("$(printf '%-62s %-24s %4d s' "$name" "$status" $((SECONDS - t0)))")
    local last=""
    [ "$status" = ok ] || { failed=$((failed + 1)); last=$(tail -n +"$((mark + 1))" "$LOG" | tail -n 25 | scrub | sed 's/^/    | /'); }
    note "<== $name: $status ($((SECONDS - t0)) s)"
    [ -z "$last" ] || printf '%s\n' "$last"  # a failed step's last lines, here only (the log has them all)
}
# The step table, to the terminal and to summary.txt; exits with the number of failed steps.
finish() {
    {
        echo "gpu_check: $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - START)) s of a ${BUDGET} s budget (0: none)"
        [ -z "${GPU_LINE:-}" ] || echo "device: $GPU_LINE"
        printf '  %s\n' "${results[@]}"
        [ "$failed" -eq 0 ] && echo "  every step passed" || echo "  $failed step(s) failed"
        [ -z "${FIGURES:-}" ] || printf 'figures (from the log):\n%s\n' "$FIGURES"
        echo "whole log: $LOG"
    } | scrub >"$SUMMARY"
    # The steps' own output went to the log as they wrote it: their paths too go now.
    [ ${#SCRUB_ARGS[@]} -eq 0 ] || sed -i "${SCRUB_ARGS[@]}" "$LOG"
    say "summary"
    tee -a "$LOG" <"$SUMMARY"
    exit "$failed"
}

# --- preflight: what this machine is, and whether there is a GPU at all --------------------------------------------
GPU_LINE=""
preflight() {
    say "preflight"
    if command -v "$NVIDIA_SMI" >/dev/null 2>&1; then
        GPU_LINE=$("$NVIDIA_SMI" --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)
    fi
    note "  GPU      ${GPU_LINE:-none seen (no nvidia-smi, or it lists no device)}"
    NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    note "  nvcc     $({ [ -x "$NVCC" ] && "$NVCC" --version | grep -m1 release; } || echo '(not found)')"
    note "  g++      $({ command -v g++ >/dev/null && g++ --version | head -1; } || echo '(not found)')"
    local cuda_home cublas
    cuda_home=$(dirname "$(dirname "$NVCC")")
    cublas=$(ls "$cuda_home"/lib64/libcublas.so* "$cuda_home"/targets/*/lib/libcublas.so* 2>/dev/null | head -1)
    [ -n "$cublas" ] || cublas=$(ldconfig -p 2>/dev/null | grep -m1 -o '/[^ ]*libcublas\.so[^ ]*' || true)
    note "  cuBLAS   ${cublas:-(not found)}"
    for tool in cmake ninja python3; do note "  $(printf '%-8s' "$tool") $({ command -v "$tool" >/dev/null && "$tool" --version 2>&1 | head -1; } || echo '(not found)')"; done
    note "  machine  $(uname -m), $(nproc) cores; log and summary in $OUT_DIR"
}

if [ "$SELF_TEST" -eq 1 ]; then
    # The machinery, with fake steps: the preflight without nvidia-smi, a budget of 5 s, a step that prints
    # this machine's paths into the log, a step past its limit that has started a child, and a step the spent
    # budget leaves NOT RUN.
    NVIDIA_SMI=/nonexistent/nvidia-smi preflight
    [ -z "$GPU_LINE" ] || { echo "self-test: the preflight saw a GPU without nvidia-smi"; exit 1; }
    BUDGET=5 MIN_LEFT=4 START=$SECONDS
    step "a quick step" 5 true
    step "a step that prints absolute paths" 5 printf 'root %s/tools, physical %s, out %s/gpu_check.log\n' "$ROOT" "$(pwd -P)" "$OUT_DIR"
    step "a slow step that started a child (limit 2 s)" 2 bash -c "sleep 300 & echo \$! >'$OUT_DIR/child.pid'; wait"
    step "a step after the budget" 5 sleep 30
    sleep 1
    bad=0
    pid=$(cat "$OUT_DIR/child.pid" 2>/dev/null || echo "")
    # Gone, or a zombie (Z) not yet reaped. Read from /proc, not `ps`: a bare machine may lack procps.
    state=""
    if [ -z "$pid" ]; then state="no pid written"
    elif kill -0 "$pid" 2>/dev/null; then state=$(cut -d')' -f2 "/proc/$pid/stat" 2>/dev/null | awk '{print $1}'); fi
    [ -z "$state" ] || [[ "$state" == Z* ]] || { note "self-test: FAIL: the timed-out step's child ${pid:-?} is alive ($state)"; bad=1; }
    (finish) >/dev/null
    for want in "a quick step .* ok" "a slow step .* TIMED OUT after 2 s" "a step after the budget .* NOT RUN" "2 step\(s\) failed"; do
        grep -Eq "$want" "$SUMMARY" || { note "self-test: FAIL: summary.txt has no line matching '$want'"; bad=1; }
    done
    grep -q "==> a slow step" "$LOG" || { note "self-test: FAIL: the log lacks the steps"; bad=1; }
    # No absolute path of the repository or of the output folder in the log or the summary: the paths the
    # step printed are there as placeholders.
    for abs in "$ROOT" "$(pwd -P)" "$OUT_DIR" "$(cd "$OUT_DIR" && pwd -P)"; do
        for f in "$LOG" "$SUMMARY"; do
            ! grep -qF "$abs" "$f" || { echo "self-test: FAIL: $(basename "$f") names the absolute path $abs: $(grep -m1 -nF "$abs" "$f")"; bad=1; }
        done
    done
    grep -qE '^root \./tools, physical \., out (\$GPU_CHECK_OUT|\.[^ ]*)/gpu_check\.log$' "$LOG" ||
        { echo "self-test: FAIL: the paths the step printed are not in the log as ./ and \$GPU_CHECK_OUT: $(grep -m1 '^root ' "$LOG")"; bad=1; }
    [ "$bad" -eq 0 ] && note "self-test: ok (preflight without a GPU, budget, process-group kill, log and summary in $OUT_DIR, no absolute paths in them)"
    exit "$bad"
fi

preflight
if [ -z "$GPU_LINE" ] && [ "$NO_CUDA" -eq 0 ]; then
    results+=("$(printf '%-62s %-24s %4d s' "preflight" "no GPU: nothing run" 0)")
    note "gpu_check: no CUDA device was found, so there is nothing to check here (--no-cuda checks the set-up without one)"
    (finish) >/dev/null
    cat "$SUMMARY"
    exit 77
fi
[ "$(uname -m)" = x86_64 ] || note "warning: the .debs are amd64 (x86-64); this machine is $(uname -m)"

# --- set-up: the dependencies from the .debs, and the build's configuration (output to the log) ---------------------
# setup_failed WHAT: the run cannot go on; the log's last lines here, the summary, and exit.
setup_failed() {
    results+=("$(printf '%-62s %-24s %4d s' "set-up: $1" "FAILED" $((SECONDS - START)))")
    failed=$((failed + 1))
    note "gpu_check: $1 failed; its last lines:"
    tail -n 25 "$LOG" | scrub | sed 's/^/    | /'
    finish
}
say "set-up: unpack $DEBS/*.deb into $BUILD/prefix, configure $BUILD (details in the log)"
ls "$DEBS"/*.deb >/dev/null 2>&1 || { note "gpu_check: no .deb files in $DEBS/ — run 'tools/gpu_check.sh --fetch' on a Debian machine with network first, and carry $DEBS/ here"; setup_failed "the .debs"; }
mkdir -p "$BUILD"
PREFIX="$(cd "$BUILD" && pwd)/prefix"
rm -rf "$PREFIX"
mkdir -p "$PREFIX"
for deb in "$DEBS"/*.deb; do
    if command -v dpkg-deb >/dev/null; then
        dpkg -x "$deb" "$PREFIX" >>"$LOG" 2>&1 || setup_failed "dpkg -x $deb"
    else  # no dpkg: a .deb is an ar archive holding data.tar.*
        (tmp=$(mktemp -d) && cd "$tmp" && ar x "$OLDPWD/$deb" && tar -xf data.tar.* -C "$PREFIX" && rm -rf "$tmp") >>"$LOG" 2>&1 ||
            setup_failed "unpacking $deb"
    fi
    echo "  $(basename "$deb")" >>"$LOG"
done
LIBDIR=$(ls -d "$PREFIX"/usr/lib/*-linux-gnu 2>/dev/null | head -1)
BLASDIR=$(ls -d "$LIBDIR"/openblas-pthread "$LIBDIR"/openblas-openmp "$LIBDIR"/openblas-serial 2>/dev/null | head -1)
[ -n "$LIBDIR" ] && [ -n "$BLASDIR" ] || setup_failed "finding OpenBLAS in the unpacked .debs"
# What update-alternatives would have done: the generic BLAS/LAPACK names point at OpenBLAS.
for lib in libopenblas.so libopenblas.so.0 libblas.so libblas.so.3 liblapack.so liblapack.so.3; do
    [ -e "$BLASDIR/$lib" ] && ln -sf "$(basename "$BLASDIR")/$lib" "$LIBDIR/$lib"
done
CBLAS_INCLUDE="$PREFIX/usr/include/$(basename "$LIBDIR")/$(basename "$BLASDIR")"  # cblas.h, openblas_config.h
export LD_LIBRARY_PATH="$LIBDIR:$BLASDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$BLASDIR/pkgconfig:$LIBDIR/pkgconfig"
echo "  prefix $PREFIX/usr; OpenBLAS from $BLASDIR; cblas.h from $CBLAS_INCLUDE" >>"$LOG"

GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
CUDA_ARGS=(-DATTN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH")
[ "$NO_CUDA" -eq 0 ] || CUDA_ARGS=(-DATTN_CUDA=OFF)
# CMAKE_POLICY_VERSION_MINIMUM: Debian's package configs declare old policy versions, which CMake ≥ 4 accepts
# only with this (older CMake ignores it).
timeout -k 10 120 cmake -S . -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX/usr" \
      -DCMAKE_CXX_FLAGS="-isystem $CBLAS_INCLUDE" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "${CUDA_ARGS[@]}" </dev/null >>"$LOG" 2>&1 ||
    setup_failed "configure (cmake -S . -B $BUILD)"
# Every dependency must come from the prefix: a system copy would make this check say nothing.
bad_paths=0
for var in "${PREFIX_CHECK_VARS[@]}"; do
    value=$(grep -E "^${var}:" "$BUILD/CMakeCache.txt" | cut -d= -f2-)
    case "$value" in
        "$PREFIX"/*) echo "  $var = $value" >>"$LOG" ;;
        *) note "  $var = ${value:-(not set)}   ← NOT from the prefix"; bad_paths=$((bad_paths + 1)) ;;
    esac
done
[ "$bad_paths" -eq 0 ] || setup_failed "$bad_paths dependencies found outside the prefix"
note "  set-up done in $((SECONDS - START)) s"

if [ "$NO_CUDA" -eq 1 ]; then
    step "build: unit_tests 01_averaging (-j$JOBS)" 1500 cmake --build "$BUILD" -j"$JOBS" --target unit_tests 01_averaging
    step "the linked OpenBLAS is the prefix's" 30 bash -c "ldd '$BUILD/bin/unit_tests' | grep -E 'openblas|gfortran' && ldd '$BUILD/bin/unit_tests' | grep -q '$PREFIX'"
    step "unit_tests [gpu-host]: the GPU module's CPU-side tests" 300 "$BUILD/bin/unit_tests" "[gpu-host]"
    step "unit_tests [matmul]: SGEMM through the prefix's OpenBLAS" 120 "$BUILD/bin/unit_tests" "[matmul]"
    step "01_averaging (in $BUILD: it writes an SVG where it runs)" 60 bash -c "cd '$BUILD' && bin/01_averaging"
    finish
fi
grep -q "gpu_tests" <<<"$(cmake --build "$BUILD" --target help 2>/dev/null)" ||
    setup_failed "finding nvcc (CMake configured no GPU targets)"
SANITIZER=$(command -v compute-sanitizer || echo "$(dirname "$NVCC")/compute-sanitizer")

step "build: the GPU tests, exercises, 11_gpu_block, 10_block, 12_language_model, bench_lm_train (-j$JOBS)" 300 \
    cmake --build "$BUILD" -j"$JOBS" --target gpu_tests gpu_solution_tests gpu_exercise_tests 11_gpu_block 12_language_model bench_lm_train 10_block
step "tools/check_spills.sh: no spills, v3 and flash on-chip" 30 tools/check_spills.sh "$BUILD"
step "gpu_tests: the kernels and the block against the CPU library" 120 "$BUILD/bin/gpu_tests"
step "compute-sanitizer memcheck: gpu_tests --quick" 90 \
    "$SANITIZER" --tool memcheck --error-exitcode 1 "$BUILD/bin/gpu_tests" --quick
step "compute-sanitizer racecheck: gpu_tests --quick" 120 \
    "$SANITIZER" --tool racecheck --racecheck-report hazard --error-exitcode 1 "$BUILD/bin/gpu_tests" --quick
step "gpu_solution_tests: exercises 11.1-11.3 on their answers" 60 "$BUILD/bin/gpu_solution_tests"
# Each GPU exercise's test must fail on its untouched stub, with the stub's message (tools/check_stubs.sh).
stub_check() {
    local bad=0 id out
    for id in 11.1 11.2 11.3; do
        if out=$("$BUILD/bin/gpu_exercise_tests" "[ex$id]" 2>&1); then
            echo "  FAIL exercise $id: passes on the stub"; bad=1
        elif grep -q "not implemented: exercise $id " <<<"$out"; then
            echo "  ok   exercise $id: fails on its stub"
        else
            echo "  FAIL exercise $id: fails, but not with the stub's message:"; grep -m3 -E 'FAILED|error|SKIPPED' <<<"$out"; bad=1
        fi
    done
    return $bad
}
step "gpu_exercise_tests: each exercise's test fails on its stub" 60 stub_check
step "11_gpu_block --max-T $MAX_T" 180 "$BUILD/bin/11_gpu_block" --max-T "$MAX_T"
step "11_gpu_block as an 8 GB card (--device-mb 8192 --max-T 32768)" 60 \
    "$BUILD/bin/11_gpu_block" --device-mb 8192 --max-T 32768 --B 1 --T 64
torch_step() {
    local rc=0
    PYTHONUNBUFFERED=1 python3 tools/torch_sdpa.py --max-T "$MAX_T" || rc=$?
    [ "$rc" -ne 77 ] || { echo "(PyTorch unavailable: not counted as a failure)"; rc=0; }
    return $rc
}
step "tools/torch_sdpa.py: PyTorch's attention at the same shapes" 90 torch_step
# Training on the GPU: the chapter's size and vocabulary, tokens/s and the --full ladder's projected
# time; then the ladder itself at --quick through 12_language_model's own loop.
step "GPU training: bench_lm_train throughput --full --vocab 1024 --device gpu" 90 \
    "$BUILD/bin/bench_lm_train" throughput --full --vocab 1024 --device gpu --steps 50
step "GPU training: one step's phases and launches (bench_lm_train phases --full --vocab 1024)" 60 \
    "$BUILD/bin/bench_lm_train" phases --full --vocab 1024 --device gpu --steps 50
step "GPU training: the same step recorded as CUDA Graphs (bench_lm_train phases --full --vocab 1024 --graph)" 60 \
    "$BUILD/bin/bench_lm_train" phases --full --vocab 1024 --device gpu --steps 50 --graph
step "GPU training: CUDA Graphs and TF32 against eager fp32 and the CPU (bench_lm_train precision --full --vocab 1024)" 90 \
    "$BUILD/bin/bench_lm_train" precision --full --vocab 1024 --device gpu --steps 30 --threads 8
step "GPU training: the --full ladder's projected time (bench_lm_train project --device gpu)" 120 \
    "$BUILD/bin/bench_lm_train" project --vocab 1024 --device gpu --steps 20
step "GPU training: 12_language_model ladder --quick --device gpu" 120 \
    bash -c "cd '$BUILD' && bin/12_language_model ladder --quick --device gpu --svg ladder_gpu.svg"
step "GPU training: 10_block --device gpu (the pronoun models, C36's maps read back on the CPU)" 120 \
    bash -c "cd '$BUILD' && bin/10_block --device gpu --steps 300 --no-timing --svg block_gpu.svg"
# The figures a remote run should bring back whatever else scrolls away, into the summary: the agreement
# lines, C31 and v3's registers (all in the log too).
FIGURES=$(grep -E "agree with the CPU|DISAGREES|^ *C31|attention_v3<(64|128)>|every tensor agrees|SOME TENSORS|tokens/s|projected training time|ms/step|the step |kernel launches|losses within|bit for bit" "$LOG" | head -48)
finish
