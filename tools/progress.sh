#!/usr/bin/env bash
# Your progress through the exercises, one at a time. Builds your code in exercises/, runs the exercise
# tests, and shows the first exercise not yet done: what it asks, the file to edit, what its test expected
# and what yours gave; then "k of n done".
#
#   tools/progress.sh            the first exercise not yet done
#   tools/progress.sh --hint     ... and its next hint (hint 1 the idea, hint 2 the formula)
#   tools/progress.sh --all      every exercise, done or not, one line each
#   tools/progress.sh --watch    check again on every save (Ctrl-C to stop)
#
# One exercise's test by hand: ./build/bin/exercise_tests "[ex2.1]"
source "$(dirname "$0")/common.sh"

mode=first
for arg in "$@"; do
    case "$arg" in
        --hint) mode=hint ;;
        --all) mode=all ;;
        --watch) mode=watch ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "progress.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

[ -f build/build.ninja ] || { ensure_packages; cmake --preset release >/dev/null; }
bin="build/bin/exercise_tests"
gpu_bin="build/bin/gpu_exercise_tests"
hints_seen="build/progress-hints"  # how many hints of each exercise you have asked for

# Only the exercise tests are rebuilt (seconds after an edit); a compile error in your code is shown whole.
build_exercises() {
    local targets=(exercise_tests)
    grep -q "gpu_exercise_tests:" build/build.ninja 2>/dev/null && targets+=(gpu_exercise_tests)
    local log
    if ! log=$(cmake --build build --target "${targets[@]}" 2>&1); then
        printf '%s\n' "$log" | grep -E -A5 'error' | head -40
        echo
        echo "Your code does not compile (above): fix the first error and save."
        return 1
    fi
}

# The GPU exercises (11.x) run on the CPU emulation like the others; where nvcc built their device tests and a
# CUDA device exists, also on the device (an exercise is done when both pass).
on_device=""
probe_device() {
    on_device=""
    [ -x "$gpu_bin" ] || return 0
    local ids rc=0
    ids=$(exercise_ids "$gpu_bin")
    "$gpu_bin" "[ex${ids%% *}]" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 77 ] || on_device=$(tr ' ' '\n' <<<"$ids")
}

# run_test ID: its test's output in $out; success when it passes (on the device too, where there is one).
run_test() {
    out=$("$bin" "[ex$1]" 2>&1) || return 1
    if [ -n "$on_device" ] && grep -qx "$1" <<<"$on_device"; then out=$("$gpu_bin" "[ex$1]" 2>&1) || return 1; fi
}

# The exercise's text in its header: the lines under "/// Exercise ID — name", without the ///.
exercise_text() {
    awk -v id="$1" '
        index($0, "/// Exercise " id " ") == 1 {f = 1; next}
        f && !/^\/\/\// {exit}
        f {sub(/^\/\/\/ ?/, ""); print}' exercises/*/*.hpp
}
exercise_header() { grep -l "^/// Exercise $1 " exercises/*/*.hpp | head -1; }
exercise_file() {  # the file you edit: the .cpp (or .cu) beside the header
    local h
    h=$(exercise_header "$1")
    for ext in cpp cu; do [ -f "${h%.hpp}.$ext" ] && { echo "${h%.hpp}.$ext"; return; }; done
    echo "$(dirname "$h")/"
}
# The statement: everything before the first hint.
statement() { exercise_text "$1" | awk '/^Hint( [0-9])?:/ {exit} {print}'; }
# Hint tier K (1, 2, ...), with its continuation lines; "Hint:" alone counts as hint 1.
hint() {
    exercise_text "$1" | awk -v k="$2" '
        /^Hint:/ {n = 1; on = (n == k); if (on) {sub(/^Hint: */, ""); print}; next}
        /^Hint [0-9]+:/ {n = $2 + 0; on = (n == k); if (on) {sub(/^Hint [0-9]+: */, ""); print}; next}
        on {sub(/^ +/, "  "); print}'
}
hint_count() { exercise_text "$1" | grep -cE '^Hint( [0-9]+)?:' || true; }

# What the test said: each failure's message, as Catch printed it, without the file paths.
failure() {
    awk '/FAILED:/ {f = 1; next}
         f && /^(=+|-+)$/ {exit}
         f && /^(explicitly with message|with expansion|due to unexpected exception with message):$/ {next}
         f && NF {sub(/^ +/, "    "); print}' <<<"$out" | head -12
}

show_first() {  # $1: "hint" to show the next hint tier
    local ids done=0 n=0 current="" id
    ids=$(exercise_ids "$bin")
    for id in $ids; do
        n=$((n + 1))
        if run_test "$id"; then done=$((done + 1)); elif [ -z "$current" ]; then current=$id current_out=$out; fi
    done
    echo
    if [ -z "$current" ]; then
        echo "All $n exercises done. Each section's program shows yours beside the library's: build/bin/02_soft_lookup --mine"
        return
    fi
    out=$current_out
    echo "Exercise $current — $(exercise_name "$current")        ($done of $n done)"
    echo
    statement "$current" | sed 's/^/  /'
    echo
    echo "  Edit: $(exercise_file "$current")"
    if grep -q "not implemented: exercise $current " <<<"$out"; then
        echo "  Status: not written yet (the stub still throws)"
    else
        echo "  Its test says:"
        failure
    fi
    local tiers seen
    tiers=$(hint_count "$current")
    mkdir -p "$hints_seen"
    seen=$(cat "$hints_seen/$current" 2>/dev/null || echo 0)
    if [ "${1:-}" = hint ] && [ "$seen" -lt "$tiers" ]; then seen=$((seen + 1)); echo "$seen" >"$hints_seen/$current"; fi
    for k in $(seq 1 "$seen"); do
        echo
        echo "  Hint $k of $tiers:"
        hint "$current" "$k" | sed 's/^/    /'
    done
    echo
    if [ "$seen" -lt "$tiers" ]; then
        echo "Stuck? tools/progress.sh --hint shows hint $((seen + 1)) of $tiers. Check one test: $bin \"[ex$current]\""
    else
        echo "Still stuck? The reference answer is in solutions/$(dirname "$(exercise_header "$current")" | sed 's#^exercises/##')/."
    fi
}

show_all() {
    local ids done=0 n=0 id
    ids=$(exercise_ids "$bin")
    echo
    for id in $ids; do
        n=$((n + 1))
        if run_test "$id"; then done=$((done + 1)); printf '  ✓ %-5s %s\n' "$id" "$(exercise_name "$id")"
        else printf '  ✗ %-5s %s\n' "$id" "$(exercise_name "$id")"; fi
    done
    echo
    echo "$done of $n done. tools/progress.sh shows the first one not done, with what its test says."
}

check_once() {
    build_exercises || return 0
    probe_device
    case "$mode" in
        all) show_all ;;
        hint) show_first hint ;;
        *) show_first ;;
    esac
}

if [ "$mode" != watch ]; then
    check_once
    exit 0
fi

# --watch: check, then wait for a save in exercises/ and check again.
mode=first
if command -v inotifywait >/dev/null; then
    wait_for_save() { inotifywait -qq -r -e close_write,moved_to exercises/ 2>/dev/null || sleep 1; }
else
    echo "(inotifywait not found — Debian's inotify-tools; checking for saves every second instead)"
    stamp() { find exercises -type f -printf '%T@ %p\n' | sort | md5sum; }
    wait_for_save() { local s; s=$(stamp); while [ "$(stamp)" = "$s" ]; do sleep 1; done; }
fi
while true; do
    clear 2>/dev/null || true
    echo "tools/progress.sh --watch: checking on every save in exercises/ (Ctrl-C to stop) — $(date +%T)"
    check_once
    wait_for_save
done
