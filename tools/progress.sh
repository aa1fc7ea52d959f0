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
for id in $(exercise_ids "$bin"); do
    n=$((n + 1))
    name=$(exercise_name "$id")
    if out=$("$bin" "[ex$id]" -r compact 2>&1); then
        done=$((done + 1))
        printf '  ✓ %-5s %s\n' "$id" "$name"
    else
        printf '  ✗ %-5s %s\n' "$id" "$name"
        first=$(printf '%s\n' "$out" | grep -m1 -E 'failed|FAILED' | sed -E 's#^.*/tests/#tests/#' | cut -c1-220)
        printf '          %s\n' "${first:-the test failed}"
        printf '          hint: %s\n' "$(exercise_hint "$id")"
    fi
done
echo
echo "$done of $n done"
