#!/usr/bin/env bash
# Proves that each exercise test fails on the stub in exercises/ (so no test is vacuous). That it
# passes on solutions/ is part of the default tests. Run by tools/test.sh while exercises/ is untouched.
source "$(dirname "$0")/common.sh"
bin="build/bin/exercise_tests"
[ -x "$bin" ] || { echo "check_stubs: $bin is not built; run tools/test.sh" >&2; exit 1; }
ids=$(exercise_ids "$bin")
n=0; bad=0
for id in $ids; do
    n=$((n + 1))
    if out=$("$bin" "[ex$id]" 2>&1); then
        echo "  FAIL exercise $id: its test passes on the untouched stub — the test cannot catch anything"
        bad=$((bad + 1))
    elif ! grep -q "not implemented: exercise $id " <<<"$out"; then
        echo "  FAIL exercise $id: its test fails on the stub, but not with the stub's own message:"
        grep -m1 -E 'FAILED|failed|error' <<<"$out" | sed 's/^/         /'
        bad=$((bad + 1))
    else
        echo "  ok   exercise $id: fails on its stub"
    fi
done
[ "$n" -gt 0 ] || { echo "check_stubs: no exercise tests found" >&2; exit 1; }
echo "  $((n - bad)) of $n exercise tests fail on their stubs"
[ "$bad" -eq 0 ]
