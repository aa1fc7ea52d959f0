#!/usr/bin/env bash
# Proves that the exercise tests catch the mistakes a learner makes. Each file in tests/mistakes/ is one
# plausible mistake, written as a small patch against the reference answer in solutions/:
#
#   Exercise: 2.1
#   Mistake: subtracting the smallest score instead of the largest
#   Named: subtracting the smallest score          (optional: the test's failure must say this)
#   Says: the contract asks for attn::Error         (optional: the failure must contain this text)
#   diff --git a/solutions/... b/solutions/...
#
# Each patch is applied, solution_tests rebuilt and that exercise's test run: it must fail; where the file has
# a "Named:" line the failure must name the mistake, and where it has none it must name no other. The mistakes
# go in rounds, at most one patch per file of solutions/ a round, all of a round built at once: the answers of
# one section call nothing of another's, and each test runs one exercise, so a round's patches cannot hide or cause each other's failures. After each
# round the patches are taken back (also when this script is interrupted) and, at the end, solution_tests is
# rebuilt from the untouched answers.
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
applied=()
restore() {
    local p
    for p in "${applied[@]}"; do git apply -R "$p" || echo "check_mistakes: could not take back $p" >&2; done
    applied=()
}
trap 'restore; cmake --build "$build_dir" --target solution_tests >/dev/null' EXIT
trap 'exit 130' INT TERM

# The file of solutions/ a patch changes (one each).
target() { sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "$1" | head -1; }

pending=()
for patch in tests/mistakes/*.patch; do
    case "$patch" in *"${1:-}"*) pending+=("$patch") ;; esac
done
n=${#pending[@]}
[ "$n" -gt 0 ] || { echo "check_mistakes: no mistake matches '${1:-}'" >&2; exit 1; }

bad=0 round=0
while [ "${#pending[@]}" -gt 0 ]; do
    round=$((round + 1))
    declare -A taken=()
    this=() later=()
    for patch in "${pending[@]}"; do
        file=$(target "$patch")
        if [ -n "${taken[$file]:-}" ]; then later+=("$patch"); continue; fi
        if ! git apply "$patch" 2>/dev/null; then
            echo "  FAIL $(basename "$patch" .patch): the patch no longer applies to solutions/ (update it)"
            bad=$((bad + 1)); continue
        fi
        taken[$file]=1 applied+=("$patch") this+=("$patch")
    done
    unset taken
    pending=("${later[@]}")
    [ "${#this[@]}" -gt 0 ] || continue
    if ! cmake --build "$build_dir" --target solution_tests -- -j"$(nproc)" >/dev/null 2>&1; then
        # Which one? Build them one at a time.
        restore
        for patch in "${this[@]}"; do
            git apply "$patch" && applied+=("$patch")
            cmake --build "$build_dir" --target solution_tests >/dev/null 2>&1 ||
                { echo "  FAIL $(basename "$patch" .patch): the patched answer does not compile (a mistake must be one a compiler lets through)"; bad=$((bad + 1)); }
            restore
        done
        continue
    fi
    for patch in "${this[@]}"; do
        id=$(sed -n 's/^Exercise: *//p' "$patch" | head -1)
        what=$(sed -n 's/^Mistake: *//p' "$patch" | head -1)
        named=$(sed -n 's/^Named: *//p' "$patch" | head -1)
        says=$(sed -n 's/^Says: *//p' "$patch" | head -1)
        name=$(basename "$patch" .patch)
        # A mistake that corrupts memory can leave the test waiting forever: 60 s, then it counts as caught
        # (tools/progress.sh stops a learner's test at 30 s and says why).
        out=$(timeout 60 "$bin" "[ex$id]" 2>&1) && rc=0 || rc=$?
        if [ "$rc" -eq 124 ]; then
            echo "  ok   $name: caught (the test did not finish within 60 s; progress.sh reports it as a hang)"
            continue
        fi
        if [ "$rc" -eq 0 ]; then
            echo "  FAIL $name: exercise $id's test passes with this mistake: $what"
            bad=$((bad + 1))
            continue
        fi
        # What the failure must contain: the mistake's name, as the tests say it, and the Says: text.
        # Catch wraps long messages: compare with the line breaks and runs of spaces folded into one space.
        missing=""
        for want in ${named:+"this is exactly what $named"} ${says:+"$says"}; do
            tr -s ' \n' '  ' <<<"$out" | grep -qF "$want" || { missing=$want; break; }
        done
        # A mistake the catalogue does not name must not be given another mistake's name: the test may name
        # one only when its input tells that one apart from the others.
        misnamed=""
        if [ -z "$named" ]; then
            misnamed=$(tr -s ' \n' '  ' <<<"$out" | grep -oE "this is exactly what .{0,80} gives|each of these mistakes gives exactly this" | head -1 || true)
        fi
        if [ -n "$missing" ]; then
            echo "  FAIL $name: exercise $id's test fails but does not say \"$missing\":"
            grep -m2 -E 'FAILED|yours|expected' <<<"$out" | sed 's/^/         /'
            bad=$((bad + 1))
        elif [ -n "$misnamed" ]; then
            echo "  FAIL $name: exercise $id's test names a mistake (\"$misnamed\") but this file has no Named: line:"
            echo "         add one if that is this mistake, or give the test an input that tells the two apart"
            bad=$((bad + 1))
        else
            echo "  ok   $name: caught${named:+ and named}${says:+ and explained}"
        fi
    done
    restore
done
echo "  $((n - bad)) of $n mistakes caught by the exercise tests ($round builds)"
[ "$bad" -eq 0 ]
