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
# report ID: runs exercise ID's test — on the CPU, and for a GPU exercise also on the device where there is
# one — and prints ✓, or ✗ with the first failing line and the hint.
report() {
    local id=$1 name out first
    name=$(exercise_name "$id")
    n=$((n + 1))
    if out=$("$bin" "[ex$id]" -r compact 2>&1) && { [ -z "$on_device" ] || ! grep -qx "$id" <<<"$on_device" ||
                                                   out=$("$gpu_bin" "[ex$id]" -r compact 2>&1); }; then
        done=$((done + 1))
        printf '  ✓ %-5s %s\n' "$id" "$name"
    else
        printf '  ✗ %-5s %s\n' "$id" "$name"
        first=$(printf '%s\n' "$out" | grep -m1 -E 'failed|FAILED' | sed -E 's#^.*/tests/#tests/#' | cut -c1-220)
        printf '          %s\n' "${first:-the test failed}"
        printf '          hint: %s\n' "$(exercise_hint "$id")"
    fi
}
# The GPU exercises (11.x) run on the CPU emulation like the others; where nvcc built their device tests
# and a CUDA device exists, also on the device (an exercise is done when both pass).
gpu_bin="build/bin/gpu_exercise_tests"
on_device=""
gpu_note=" (the GPU exercises 11.x ran on the CPU emulation; no GPU here)"
if [ -x "$gpu_bin" ]; then
    gpu_ids=$(exercise_ids "$gpu_bin")
    probe_rc=0
    "$gpu_bin" "[ex${gpu_ids%% *}]" -r compact >/dev/null 2>&1 || probe_rc=$?
    [ "$probe_rc" -eq 77 ] || { on_device=$(tr ' ' '\n' <<<"$gpu_ids"); gpu_note=" (the GPU exercises 11.x on the CPU emulation and the device)"; }
fi
for id in $(exercise_ids "$bin"); do report "$id"; done
echo
echo "$done of $n done$gpu_note"
