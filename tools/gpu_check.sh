#!/usr/bin/env bash
# tools/gpu_check.sh — every GPU check of the project (Section 9.8), as one prepared run on a lent GPU
# machine that has the CUDA toolkit (nvcc), CMake, ninja and PyTorch but none of our Debian packages and
# no network. Two steps:
#
#   1. Here, on a Debian 12 (bookworm) machine with network, from the repository root:
#          tools/gpu_check.sh --fetch
#      downloads with `apt-get download` the .deb files of what the build needs and such a machine lacks —
#      xtl, xtensor, xtensor-blas (and nlohmann-json, which xtensor's package depends on), Catch2, OpenBLAS
#      (libopenblas-dev, libopenblas-pthread-dev, libopenblas0, libopenblas0-pthread) and OpenBLAS's
#      runtime libraries (libgfortran5, libquadmath0) — into .gpu-debs/ (ignored by git). Carry that folder
#      to the GPU machine with the working tree (about 14 MiB).
#
#   2. There, from the repository root:
#          tools/gpu_check.sh
#      unpacks the .debs with `dpkg -x` into a private prefix (build-gpu-check/prefix; nothing is
#      installed on the system), does by hand what the packages' maintainer scripts would (the
#      update-alternatives links that name OpenBLAS libblas/liblapack/libopenblas), configures a GPU build
#      in build-gpu-check/ against that prefix alone (CMAKE_PREFIX_PATH, OpenBLAS's include directory,
#      LD_LIBRARY_PATH, PKG_CONFIG_PATH) with CMAKE_CUDA_ARCHITECTURES=90, checks that CMake found every
#      package in the prefix, builds only the GPU targets (-j16), and runs, all to stdout:
#        - gpu_tests: every kernel (attention v1/v2/v3, LayerNorm, GELU, linear, adds) and the block and a
#          stack of blocks against the CPU library, with stated tolerances; out-of-memory handling;
#        - gpu_solution_tests: the GPU exercises 11.1–11.3 on their reference answers, and
#          gpu_exercise_tests: each exercise's test fails on its untouched stub with the stub's message;
#        - 11_gpu_block: CPU and GPU side by side, then the n² table up to --max-T tokens (v1 and v2 run out
#          of memory past 65,536 tokens on a 141 GB H200, v3 goes on), and again as the chapter's 8 GB card
#          (--device-mb 8192);
#        - tools/torch_sdpa.py: PyTorch's scaled_dot_product_attention (fp32, causal) at the same shapes.
#      Expected: about 3–4 minutes on one H200 (half of it the build). Each step has a time limit, and the
#      whole run a budget of 350 s, so it ends within 6 minutes whatever happens.
#      Exit status: the number of failed steps (0: everything passed).
#
# Options (step 2): --arch N (CMAKE_CUDA_ARCHITECTURES, default 90), --jobs N (default: all cores),
#   --max-T N (last row of the tables, default 131072), --build DIR (default build-gpu-check),
#   --debs DIR (default .gpu-debs), --budget S (seconds for the whole run, default 350: each step's own
#   limit is cut to what is left, and steps past it are reported NOT RUN; 0: no budget), --no-cuda (no
#   GPU: configure with -DATTN_CUDA=OFF against the prefix, build the unit tests and run the GPU module's
#   CPU-side tests — how step 2's set-up is tested on a machine without a GPU; no budget by default).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
exec 2>&1  # everything to stdout, in order

FETCH_PACKAGES=(xtl-dev libxtensor-dev libxtensor-blas-dev nlohmann-json3-dev catch2
                libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread libgfortran5 libquadmath0)
mode=run
ARCH=90
JOBS=$(nproc 2>/dev/null || echo 4)
MAX_T=131072
BUILD=build-gpu-check
DEBS=.gpu-debs
NO_CUDA=0
BUDGET=""

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
START=$SECONDS
[ -n "$BUDGET" ] || { [ "$NO_CUDA" -eq 1 ] && BUDGET=0 || BUDGET=350; }
failed=0
results=()
# Runs one step with a time limit — its own, cut to what is left of the whole run's budget — reports its
# status and time, and counts failures.
step() {  # step NAME LIMIT_SECONDS COMMAND...
    local name="$1" limit="$2"; shift 2
    if [ "$BUDGET" -gt 0 ]; then
        local left=$((BUDGET - (SECONDS - START)))
        if [ "$left" -lt 10 ]; then
            say "$name: NOT RUN (the ${BUDGET} s budget is spent)"
            failed=$((failed + 1))
            results+=("$(printf '%-64s %-26s %4d s' "$name" "NOT RUN: out of time" 0)")
            return
        fi
        [ "$limit" -le "$left" ] || limit=$left
    fi
    say "$name"
    local t0=$SECONDS rc=0
    if declare -F "$1" >/dev/null; then
        "$@" || rc=$?  # a function of this script: its commands carry their own limits
    else
        timeout --foreground "$limit" "$@" || rc=$?
    fi
    local status="ok"
    if [ "$rc" -eq 124 ]; then status="TIMED OUT after ${limit} s"
    elif [ "$rc" -eq 77 ]; then status="FAILED: no GPU seen (77)"
    elif [ "$rc" -ne 0 ]; then status="FAILED (exit $rc)"; fi
    [ "$status" = ok ] || failed=$((failed + 1))
    results+=("$(printf '%-64s %-26s %4d s' "$name" "$status" $((SECONDS - t0)))")
    echo "<== $name: $status ($((SECONDS - t0)) s)"
}

say "machine"
uname -m
{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; } || echo "(no nvidia-smi)"
for tool in cmake ninja g++ python3; do printf '%-8s ' "$tool"; { command -v "$tool" >/dev/null && "$tool" --version | head -1; } || echo "(not found)"; done
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
printf '%-8s ' nvcc; { [ -x "$NVCC" ] && "$NVCC" --version | tail -1; } || echo "(not found)"
[ "$(uname -m)" = x86_64 ] || echo "warning: the .debs are amd64 (x86-64); this machine is $(uname -m)"

say "dependencies: unpack $DEBS/*.deb into $BUILD/prefix (dpkg -x: no maintainer scripts, nothing installed)"
ls "$DEBS"/*.deb >/dev/null 2>&1 || { echo "gpu_check: no .deb files in $DEBS/ — run 'tools/gpu_check.sh --fetch' on a Debian machine with network first, and carry $DEBS/ here"; exit 1; }
mkdir -p "$BUILD"
PREFIX="$(cd "$BUILD" && pwd)/prefix"
rm -rf "$PREFIX"
mkdir -p "$PREFIX"
for deb in "$DEBS"/*.deb; do
    if command -v dpkg-deb >/dev/null; then
        dpkg -x "$deb" "$PREFIX" || { echo "gpu_check: dpkg -x $deb failed"; exit 1; }
    else  # no dpkg: a .deb is an ar archive holding data.tar.*
        (tmp=$(mktemp -d) && cd "$tmp" && ar x "$OLDPWD/$deb" && tar -xf data.tar.* -C "$PREFIX" && rm -rf "$tmp") ||
            { echo "gpu_check: unpacking $deb failed"; exit 1; }
    fi
    echo "  $(basename "$deb")"
done
LIBDIR=$(ls -d "$PREFIX"/usr/lib/*-linux-gnu 2>/dev/null | head -1)
BLASDIR=$(ls -d "$LIBDIR"/openblas-pthread "$LIBDIR"/openblas-openmp "$LIBDIR"/openblas-serial 2>/dev/null | head -1)
[ -n "$LIBDIR" ] && [ -n "$BLASDIR" ] || { echo "gpu_check: no OpenBLAS in the unpacked .debs"; exit 1; }
# What update-alternatives would have done: the generic BLAS/LAPACK names point at OpenBLAS.
for lib in libopenblas.so libopenblas.so.0 libblas.so libblas.so.3 liblapack.so liblapack.so.3; do
    [ -e "$BLASDIR/$lib" ] && ln -sf "$(basename "$BLASDIR")/$lib" "$LIBDIR/$lib"
done
CBLAS_INCLUDE="$PREFIX/usr/include/$(basename "$LIBDIR")/$(basename "$BLASDIR")"  # cblas.h, openblas_config.h
export LD_LIBRARY_PATH="$LIBDIR:$BLASDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$BLASDIR/pkgconfig:$LIBDIR/pkgconfig"
echo "  prefix $PREFIX/usr; OpenBLAS from $BLASDIR; cblas.h from $CBLAS_INCLUDE"

GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
CUDA_ARGS=(-DATTN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH")
[ "$NO_CUDA" -eq 0 ] || CUDA_ARGS=(-DATTN_CUDA=OFF)
say "configure: cmake -S . -B $BUILD (Release, prefix only, ${CUDA_ARGS[*]})"
# CMAKE_POLICY_VERSION_MINIMUM: Debian's package configs declare old policy versions, which CMake ≥ 4 accepts
# only with this (older CMake ignores it).
cmake -S . -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX/usr" \
      -DCMAKE_CXX_FLAGS="-isystem $CBLAS_INCLUDE" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "${CUDA_ARGS[@]}" ||
    { echo "gpu_check: configure failed"; exit 1; }
# Every dependency must come from the prefix: a system copy would make this check say nothing.
say "where CMake found the dependencies"
bad_paths=0
for var in xtl_DIR xtensor_DIR xtensor-blas_DIR Catch2_DIR BLAS_openblas_LIBRARY; do
    value=$(grep -E "^${var}:" "$BUILD/CMakeCache.txt" | cut -d= -f2-)
    case "$value" in
        "$PREFIX"/*) echo "  $var = $value" ;;
        *) echo "  $var = ${value:-(not set)}   ← NOT from the prefix"; bad_paths=$((bad_paths + 1)) ;;
    esac
done
grep -E "^CMAKE_CUDA_COMPILER:|^CMAKE_CUDA_ARCHITECTURES:" "$BUILD/CMakeCache.txt" | sed 's/^/  /'
[ "$bad_paths" -eq 0 ] || { echo "gpu_check: $bad_paths dependencies were found outside the prefix"; exit 1; }

if [ "$NO_CUDA" -eq 1 ]; then
    step "build: unit_tests 01_averaging (-j$JOBS)" 1500 cmake --build "$BUILD" -j"$JOBS" --target unit_tests 01_averaging
    step "the linked OpenBLAS is the prefix's" 30 bash -c "ldd '$BUILD/bin/unit_tests' | grep -E 'openblas|gfortran' && ldd '$BUILD/bin/unit_tests' | grep -q '$PREFIX'"
    step "unit_tests [gpu-host]: the GPU module's CPU-side tests" 300 "$BUILD/bin/unit_tests" "[gpu-host]"
    step "unit_tests [matmul]: SGEMM through the prefix's OpenBLAS" 120 "$BUILD/bin/unit_tests" "[matmul]"
    step "01_averaging (in $BUILD: it writes an SVG where it runs)" 60 bash -c "cd '$BUILD' && bin/01_averaging"
else
    targets=$(cmake --build "$BUILD" --target help 2>/dev/null || true)
    if ! grep -q "gpu_tests" <<<"$targets"; then
        echo "gpu_check: CMake found no nvcc, so there are no GPU targets to build (see the configure output above)"
        exit 1
    fi
    step "build: the GPU tests, exercises and 11_gpu_block (-j$JOBS)" 420 \
        cmake --build "$BUILD" -j"$JOBS" --target gpu_tests gpu_solution_tests gpu_exercise_tests 11_gpu_block
    step "gpu_tests: the kernels and the block against the CPU library" 180 "$BUILD/bin/gpu_tests"
    step "gpu_solution_tests: exercises 11.1-11.3 on their answers" 60 "$BUILD/bin/gpu_solution_tests"
    # Each GPU exercise's test must fail on its untouched stub, with the stub's message (tools/check_stubs.sh).
    stub_check() {
        local bad=0 id out
        for id in 11.1 11.2 11.3; do
            if out=$(timeout 60 "$BUILD/bin/gpu_exercise_tests" "[ex$id]" 2>&1); then
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
    step "11_gpu_block --max-T $MAX_T" 240 "$BUILD/bin/11_gpu_block" --max-T "$MAX_T"
    step "11_gpu_block as an 8 GB card (--device-mb 8192 --max-T 32768)" 90 \
        "$BUILD/bin/11_gpu_block" --device-mb 8192 --max-T 32768 --B 1 --T 64
    torch_step() {
        local rc=0
        PYTHONUNBUFFERED=1 timeout --foreground 150 python3 tools/torch_sdpa.py --max-T "$MAX_T" || rc=$?
        [ "$rc" -ne 77 ] || { echo "(PyTorch unavailable: not counted as a failure)"; rc=0; }
        return $rc
    }
    step "tools/torch_sdpa.py: PyTorch's attention at the same shapes" 150 torch_step
fi

say "summary ($((SECONDS - START)) s in all)"
printf '  %s\n' "${results[@]}"
[ "$failed" -eq 0 ] && echo "  every step passed" || echo "  $failed step(s) failed"
exit "$failed"
