#!/usr/bin/env bash
# Your progress through the exercises: builds your code in exercises/, runs each exercise's test, and
# prints ✓ or ✗ with the first failing expectation and the hint. Run one exercise's test yourself with
#   ./build/bin/exercise_tests "[ex2.1]"
source "$(dirname "$0")/common.sh"
[ -d build ] || { ensure_packages; cmake --preset release >/dev/null; }
say "building your exercises"
# Your exercises, and the programs for --mine. A compile error in your code is shown, not hidden.
if ! log=$(cmake --build --preset release 2>&1); then
    printf '%s\n' "$log" | grep -E -A5 'error|Error' | head -40
    echo
    echo "The build failed (above): fix the first error, then run tools/progress.sh again."
    exit 1
fi
bin="build/bin/exercise_tests"
echo
echo "Your exercises (exercises/, checked by the same tests as the reference answers)"
n=0; done=0
# report BIN ID: runs exercise ID's test in BIN; prints ✓, or ✗ with the first failing line and the hint.
report() {
    local test_bin=$1 id=$2 name out first
    name=$(exercise_name "$id")
    n=$((n + 1))
    if out=$("$test_bin" "[ex$id]" -r compact 2>&1); then
        done=$((done + 1))
        printf '  ✓ %-5s %s\n' "$id" "$name"
    else
        printf '  ✗ %-5s %s\n' "$id" "$name"
        first=$(printf '%s\n' "$out" | grep -m1 -E 'failed|FAILED' | sed -E 's#^.*/tests/#tests/#' | cut -c1-220)
        printf '          %s\n' "${first:-the test failed}"
        printf '          hint: %s\n' "$(exercise_hint "$id")"
    fi
}
for id in $(exercise_ids "$bin"); do report "$bin" "$id"; done
# The GPU exercises (11.x, CUDA C++): built only where nvcc exists, run only where a CUDA device does.
gpu_bin="build/bin/gpu_exercise_tests"
gpu_note=""
if [ -x "$gpu_bin" ]; then
    gpu_ids=$(exercise_ids "$gpu_bin")
    probe_rc=0
    "$gpu_bin" "[ex${gpu_ids%% *}]" -r compact >/dev/null 2>&1 || probe_rc=$?
    for id in $gpu_ids; do
        if [ "$probe_rc" -eq 77 ]; then
            printf '  · %-5s %s — needs a GPU\n' "$id" "$(exercise_name "$id")"
        else
            report "$gpu_bin" "$id"
        fi
    done
    [ "$probe_rc" -ne 77 ] || gpu_note=" (the GPU exercises need a GPU: not counted here)"
else
    gpu_note=" (the GPU exercises of exercises/11_gpu are built only where nvcc exists)"
fi
echo
echo "$done of $n done$gpu_note"
