#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run every test.
# The tests of your exercises (label `exercises`) are not run here; see tools/progress.sh.
source "$(dirname "$0")/common.sh"
ensure_packages

# The ThreadSanitizer tree (build-tsan, below: about four minutes of a core) builds in the background from the
# start, at the lowest priority (nice 19) on every core: it takes only what the build and the checks below leave
# idle (their links, their serial steps), and every core once they are done. (On a fresh 2-core clone it still
# ends about a minute after them. At normal priority it slowed the build by more than it saved.)
say "ThreadSanitizer build: cmake --preset tsan, in the background at nice 19 (its log: build-tsan.log)"
( cmake --preset tsan >/dev/null && nice -n 19 cmake --build --preset tsan -- -j"$(nproc)" ) >"$ROOT/build-tsan.log" 2>&1 &
tsan_build=$!
trap 'kill "$tsan_build" 2>/dev/null || true' EXIT  # a check that fails below stops this build too

build release

say "headers: every header compiles on its own (cmake --build --preset release --target headers)"
cmake --build --preset release --target headers -- -j"$(nproc)"

# Every exercise test must fail on its untouched stub, or it could not tell a learner anything.
# Only while exercises/ is as committed: once you start solving, this check steps aside.
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 && [ -z "$(git -C "$ROOT" status --porcelain -- exercises)" ]; then
    say "exercise stubs: every exercise test must fail on its untouched stub"
    tools/check_stubs.sh
else
    say "exercise stubs: exercises/ has your edits (or this is not a git checkout); the stub check is skipped"
fi

# Every mistake in the catalog (tests/mistakes/) must make its exercise's test fail, and name itself where
# the catalog says the test names it. The patches apply to the committed answers, so only on a clean checkout.
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 && [ -z "$(git -C "$ROOT" status --porcelain -- solutions)" ]; then
    say "mistakes: each of tests/mistakes/ must fail its exercise's test (tools/check_mistakes.sh)"
    tools/check_mistakes.sh
else
    say "mistakes: solutions/ has uncommitted edits (or this is not a git checkout); the mistake check is skipped"
fi

# The kernels' CPU emulation runs a thread per CUDA thread: under ThreadSanitizer a missing __syncthreads
# is reported every time. The training step's loops run on the library's thread pool: its [threads] tests
# run them on 2 threads. Its own tree (build-tsan), where unit_tests holds those tests only.
say "ThreadSanitizer: the [gpu-host] and [threads] tests, and a planted race it must report (ctest --preset tsan)"
if ! wait "$tsan_build"; then
    cat "$ROOT/build-tsan.log"
    echo "tools/test.sh: the ThreadSanitizer build failed (its log above)" >&2
    exit 1
fi
ctest --preset tsan

# The bit-sensitive tests (determinism, thread counts, fast paths, pinned verdicts, the program runs) again
# under OpenBLAS's AVX2 kernels, which most laptops run, where the CPU has AVX2: a result that hangs on one
# kernel's last bit fails here, whichever kernel this machine picks by itself. (The environment's own
# kernel, OPENBLAS_CORETYPE as given or OpenBLAS's choice, runs them in the suite below.) A kernel whose
# arithmetic is the same bits as one already covered (tools/blas_fingerprint.py: sgemm and sgemv, the only
# BLAS calls of the project, over 95 shapes in every transposition) would repeat that pass exactly: it is
# named and skipped.
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    # A probe that fails (no python3, no libopenblas found) gives no fingerprint: then every pass runs.
    read -r own_core own_bits < <(tools/blas_fingerprint.py || true) || true
    declare -A covered=()
    [ -z "${own_bits:-}" ] || covered["$own_bits"]="the environment's own kernel ($own_core)"
    for kernel in Haswell Zen; do
        corename=unknown bits=""
        read -r corename bits < <(OPENBLAS_CORETYPE=$kernel tools/blas_fingerprint.py || true) || true
        if [ -n "$bits" ] && [ -n "${covered[$bits]:-}" ]; then
            say "bits under OPENBLAS_CORETYPE=$kernel ($corename): the same bits as ${covered[$bits]} on every probe (fingerprint ${bits:0:12}), covered there"
            continue
        fi
        [ -z "$bits" ] || covered["$bits"]="OPENBLAS_CORETYPE=$kernel ($corename)"
        say "bits under OPENBLAS_CORETYPE=$kernel (OpenBLAS runs its ${corename:-unknown} kernel, fingerprint ${bits:0:12}): unit_tests [bits], claim_tests [bits], ctest -L bits"
        OPENBLAS_CORETYPE=$kernel build/bin/unit_tests "[bits]"
        OPENBLAS_CORETYPE=$kernel build/bin/claim_tests "[bits]"
        OPENBLAS_CORETYPE=$kernel ctest --preset release -L bits
    done
else
    say "bits under the AVX2 kernels: this CPU has no AVX2, skipped"
fi

# Last, so that the run closes on the whole suite's count.
say "tests: ctest --preset release (unit, claims, programs, solutions)"
ctest --preset release
