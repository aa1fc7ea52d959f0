#!/usr/bin/env bash
# Proves that each exercise test fails on the stub in exercises/ (so no test is vacuous). That it
# passes on solutions/ is part of the default tests. Run by tools/test.sh while exercises/ is untouched.
source "$(dirname "$0")/common.sh"
bin="build/bin/exercise_tests"
[ -x "$bin" ] || { echo "check_stubs: $bin is not built; run tools/test.sh" >&2; exit 1; }
n=0; bad=0
# One exercise's test, run on its stub: it must fail, and with the stub's own message.
check_one() {  # $1 test binary, $2 exercise id
    n=$((n + 1))
    if out=$("$1" "[ex$2]" 2>&1); then
        echo "  FAIL exercise $2: its test passes on the untouched stub — the test cannot catch anything"
        bad=$((bad + 1))
    elif ! grep -q "not implemented: exercise $2 " <<<"$out"; then
        echo "  FAIL exercise $2: its test fails on the stub, but not with the stub's own message:"
        grep -m1 -E 'FAILED|failed|error|SKIPPED' <<<"$out" | sed 's/^/         /'
        bad=$((bad + 1))
    else
        echo "  ok   exercise $2: fails on its stub"
    fi
}
for id in $(exercise_ids "$bin"); do check_one "$bin" "$id"; done
[ "$n" -gt 0 ] || { echo "check_stubs: no exercise tests found" >&2; exit 1; }

# The GPU exercises (11.x) were checked above on the CPU emulation, like every exercise. Where nvcc built
# their device tests and a CUDA device exists (without one they exit 77), they are checked there too.
gpu_bin="build/bin/gpu_exercise_tests"
if [ -x "$gpu_bin" ]; then
    gpu_ids=$(exercise_ids "$gpu_bin")
    probe_rc=0
    "$gpu_bin" "[ex${gpu_ids%% *}]" >/dev/null 2>&1 || probe_rc=$?
    if [ "$probe_rc" -eq 77 ]; then
        echo "  --   GPU exercises $(echo $gpu_ids | tr ' ' ',') on the device: no GPU here (checked on the CPU above)"
    else
        for id in $gpu_ids; do check_one "$gpu_bin" "$id"; done
    fi
fi
echo "  $((n - bad)) of $n exercise tests fail on their stubs"
[ "$bad" -eq 0 ]
