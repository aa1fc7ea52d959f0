#!/usr/bin/env bash
# Proves that the exercise tests catch the mistakes a learner makes. Each file in tests/mistakes/ is one
# plausible mistake, written as a small patch against the reference answer in solutions/:
#
#   Exercise: 2.1
#   Mistake: subtracting the smallest score instead of the largest
#   Named: subtracting the smallest score          (optional: the test's failure must say this)
#   diff --git a/solutions/... b/solutions/...
#
# One at a time, the patch is applied, solution_tests rebuilt and that exercise's test run: it must fail,
# and where the file has a "Named:" line the failure must name the mistake. Then the patch is taken back
# (also when this script is interrupted) and solution_tests is rebuilt from the untouched answers.
#
#   tools/check_mistakes.sh [PATTERN]     only the mistakes whose file name contains PATTERN
source "$(dirname "$0")/common.sh"
build_dir="${BUILD_DIR:-build}"
bin="$build_dir/bin/solution_tests"
[ -x "$bin" ] || { echo "check_mistakes: $bin is not built; run tools/test.sh" >&2; exit 1; }
if [ -n "$(git status --porcelain -- solutions)" ]; then
    echo "check_mistakes: solutions/ has uncommitted changes; the patches apply to the committed answers" >&2
    exit 1
fi
applied=""
restore() {
    if [ -n "$applied" ]; then git apply -R "$applied" && applied=""; fi
}
trap 'restore; cmake --build "$build_dir" --target solution_tests >/dev/null' EXIT
trap 'exit 130' INT TERM

n=0 bad=0
for patch in tests/mistakes/*.patch; do
    case "$patch" in *"${1:-}"*) ;; *) continue ;; esac
    n=$((n + 1))
    id=$(sed -n 's/^Exercise: *//p' "$patch" | head -1)
    what=$(sed -n 's/^Mistake: *//p' "$patch" | head -1)
    named=$(sed -n 's/^Named: *//p' "$patch" | head -1)
    name=$(basename "$patch" .patch)
    if ! git apply "$patch" 2>/dev/null; then
        echo "  FAIL $name: the patch no longer applies to solutions/ (update it)"
        bad=$((bad + 1)); continue
    fi
    applied="$patch"
    if ! cmake --build "$build_dir" --target solution_tests >/dev/null 2>&1; then
        echo "  FAIL $name: the patched answer does not compile (a mistake must be one a compiler lets through)"
        bad=$((bad + 1)); restore; continue
    fi
    out=$("$bin" "[ex$id]" 2>&1) && rc=0 || rc=$?
    restore
    if [ "$rc" -eq 0 ]; then
        echo "  FAIL $name: exercise $id's test passes with this mistake: $what"
        bad=$((bad + 1))
    # Catch wraps long messages: compare with the line breaks and runs of spaces folded into one space.
    elif [ -n "$named" ] && ! tr -s ' \n' '  ' <<<"$out" | grep -qF "this is exactly what $named"; then
        echo "  FAIL $name: exercise $id's test fails but does not name the mistake (\"$named\"):"
        grep -m2 -E 'FAILED|yours|expected' <<<"$out" | sed 's/^/         /'
        bad=$((bad + 1))
    else
        echo "  ok   $name: caught${named:+ and named}"
    fi
done
[ "$n" -gt 0 ] || { echo "check_mistakes: no mistake matches '${1:-}'" >&2; exit 1; }
echo "  $((n - bad)) of $n mistakes caught by the exercise tests"
[ "$bad" -eq 0 ]
