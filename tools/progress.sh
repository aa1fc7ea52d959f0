#!/usr/bin/env bash
# Your progress through the exercises, one at a time. Builds your code in exercises/, runs the exercise
# tests, and shows the first exercise not yet done: what it asks, the file to edit, what its test expected
# and what yours gave; then "k of n done".
#
#   tools/progress.sh            the first exercise not yet done
#   tools/progress.sh --hint     ... and its next hint (hint 1 the idea, hint 2 the formula)
#   tools/progress.sh --all      every exercise, done or not, one line each
#   tools/progress.sh --watch    check again on every save (Ctrl-C to stop)
#   tools/progress.sh --lang vi  in Vietnamese (the default where LANG starts with vi; --lang en for English)
#
# One exercise's test by hand: ./build/bin/exercise_tests "[ex2.1]"
source "$(dirname "$0")/common.sh"

mode=first
lang=en
case "${LANG:-}" in vi*) lang=vi ;; esac
while [ $# -gt 0 ]; do
    case "$1" in
        --hint) mode=hint ;;
        --all) mode=all ;;
        --watch) mode=watch ;;
        --lang)
            case "${2:-}" in en|vi) lang=$2; shift ;; *) echo "progress.sh: --lang takes en or vi" >&2; exit 2 ;; esac ;;
        --lang=en|--lang=vi) lang=${1#--lang=} ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "progress.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
# The words of this script, in the two languages (the exercises' own text is in their headers).
if [ "$lang" = vi ]; then
    W_EXERCISE="Bài tập" W_DONE="xong" W_OF="/" W_EDIT="Sửa" W_NOT_WRITTEN="chưa viết (hàm mẫu vẫn ném lỗi)"
    W_STATUS="Trạng thái" W_TEST_SAYS="Bài kiểm tra báo:" W_HINT="Gợi ý" W_STUCK="Bí? tools/progress.sh --hint cho xem gợi ý"
    W_CHECK_ONE="Kiểm tra một bài:" W_STILL="Vẫn bí? Lời giải tham khảo ở" W_ALL_DONE="Xong cả"
    W_ALL_DONE2="bài. Chương trình của mỗi mục so bài của bạn với thư viện: build/bin/02_soft_lookup --mine"
    W_LIST_END="tools/progress.sh cho xem bài đầu tiên chưa xong, kèm điều bài kiểm tra báo."
    W_NO_COMPILE="Mã của bạn không biên dịch được (ở trên): sửa lỗi đầu tiên rồi lưu lại."
    W_WATCH="kiểm tra lại mỗi lần lưu trong exercises/ (Ctrl-C để dừng)"
    W_TIMEOUT="bài kiểm tra không xong sau 30 giây: một vòng lặp không dừng, hoặc một lần ghi ra ngoài một tensor đã làm hỏng bộ nhớ (mỗi chỉ số phải nhỏ hơn kích thước của chiều ấy)"
else
    W_EXERCISE="Exercise" W_DONE="done" W_OF="of" W_EDIT="Edit" W_NOT_WRITTEN="not written yet (the stub still throws)"
    W_STATUS="Status" W_TEST_SAYS="Its test says:" W_HINT="Hint" W_STUCK="Stuck? tools/progress.sh --hint shows hint"
    W_CHECK_ONE="Check one test:" W_STILL="Still stuck? The reference answer is in" W_ALL_DONE="All"
    W_ALL_DONE2="exercises done. Each section's program shows yours beside the library's: build/bin/02_soft_lookup --mine"
    W_LIST_END="tools/progress.sh shows the first one not done, with what its test says."
    W_NO_COMPILE="Your code does not compile (above): fix the first error and save."
    W_WATCH="checking on every save in exercises/ (Ctrl-C to stop)"
    W_TIMEOUT="the test did not finish within 30 s: an endless loop, or a write past the end of a tensor that corrupted memory (every index must stay below its axis's size)"
fi

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
        echo "$W_NO_COMPILE"
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
# A test that does not end in 30 s (an endless loop, or memory corrupted by a write past a tensor's end, which
# can leave the program waiting forever) is stopped and reported as a failure that says so.
run_test() {
    local rc=0
    out=$(timeout 30 "$bin" "[ex$1]" 2>&1) || rc=$?
    if [ "$rc" -eq 0 ] && [ -n "$on_device" ] && grep -qx "$1" <<<"$on_device"; then out=$(timeout 30 "$gpu_bin" "[ex$1]" 2>&1) || rc=$?; fi
    [ "$rc" -ne 124 ] || out=$(printf '%s\nFAILED:\n  %s\n' "$out" "$W_TIMEOUT")
    return "$rc"
}

# The exercise's text in its header: the lines under "/// Exercise ID — name", without the ///; in English the
# lines before "/// [vi]", in Vietnamese those after it (English where an exercise has no Vietnamese yet).
exercise_text() {
    local text
    text=$(awk -v id="$1" '
        index($0, "/// Exercise " id " ") == 1 {f = 1; next}
        f && !/^\/\/\// {exit}
        f {sub(/^\/\/\/ ?/, ""); print}' exercises/*/*.hpp)
    if [ "$lang" = vi ] && grep -qx '\[vi\]' <<<"$text"; then
        sed '1,/^\[vi\]$/d' <<<"$text"
    else
        sed '/^\[vi\]$/,$d' <<<"$text"
    fi
}
exercise_header() { grep -l "^/// Exercise $1 " exercises/*/*.hpp | head -1; }
exercise_file() {  # the file you edit: the .cpp (or .cu) beside the header
    local h
    h=$(exercise_header "$1")
    for ext in cpp cu; do [ -f "${h%.hpp}.$ext" ] && { echo "${h%.hpp}.$ext"; return; }; done
    echo "$(dirname "$h")/"
}
# The statement: everything before the first hint ("Hint 1:", or "Gợi ý 1:" in Vietnamese).
HINT_RE='^(Hint|Gợi ý)( [0-9]+)?:'
statement() { exercise_text "$1" | awk -v re="$HINT_RE" '$0 ~ re {exit} {print}'; }
# Hint tier K (1, 2, ...), with its continuation lines; "Hint:" alone counts as hint 1.
hint() {
    exercise_text "$1" | awk -v k="$2" -v re="$HINT_RE" '
        $0 ~ re {
            head = $0; sub(/:.*/, "", head); n = head; gsub(/[^0-9]/, "", n); n = (n == "" ? 1 : n + 0)
            on = (n == k); if (on) {sub(/^[^:]*: */, ""); print}; next
        }
        on {sub(/^ +/, "  "); print}'
}
hint_count() { exercise_text "$1" | grep -cE "$HINT_RE" || true; }

# What the test said: each failure's message, as Catch printed it, without the file paths. A property's
# message says it twice, in English and after "[vi]" in Vietnamese: the learner's language is shown, under
# the message's first line (which property, and how many inputs passed).
failure() {
    awk -v lang="$lang" '
        function flush(   i) {  # one failure: its first line, then the English or the Vietnamese of the rest
            for (i = 1; i <= n; i++)
                if (i == 1 || !split_at || (lang == "vi" ? i >= split_at : i < split_at)) print buf[i]
            n = 0; split_at = 0
        }
        /FAILED:/ {flush(); f = 1; next}
        f && /^(=+|-+)$/ {exit}
        f && /^(explicitly with message|with expansion|due to unexpected exception with message):$/ {next}
        f && NF {
            sub(/^ +/, "    ")
            if (!split_at && $0 ~ /^    \[vi\] /) { split_at = n + 1; sub(/\[vi\] /, "") }
            buf[++n] = $0
        }
        END {flush()}' <<<"$out" | head -12
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
        echo "$W_ALL_DONE $n $W_ALL_DONE2"
        return
    fi
    out=$current_out
    echo "$W_EXERCISE $current — $(exercise_name "$current")        ($done $W_OF $n $W_DONE)"
    echo
    statement "$current" | sed 's/^/  /'
    echo
    echo "  $W_EDIT: $(exercise_file "$current")"
    if grep -q "not implemented: exercise $current " <<<"$out"; then
        echo "  $W_STATUS: $W_NOT_WRITTEN"
    else
        echo "  $W_TEST_SAYS"
        failure
    fi
    local tiers seen
    tiers=$(hint_count "$current")
    mkdir -p "$hints_seen"
    seen=$(cat "$hints_seen/$current" 2>/dev/null || echo 0)
    if [ "${1:-}" = hint ] && [ "$seen" -lt "$tiers" ]; then seen=$((seen + 1)); echo "$seen" >"$hints_seen/$current"; fi
    for k in $(seq 1 "$seen"); do
        echo
        echo "  $W_HINT $k $W_OF $tiers:"
        hint "$current" "$k" | sed 's/^/    /'
    done
    echo
    if [ "$seen" -lt "$tiers" ]; then
        echo "$W_STUCK $((seen + 1)) $W_OF $tiers. $W_CHECK_ONE $bin \"[ex$current]\""
    else
        echo "$W_STILL solutions/$(dirname "$(exercise_header "$current")" | sed 's#^exercises/##')/."
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
    echo "$done $W_OF $n $W_DONE. $W_LIST_END"
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
    echo "tools/progress.sh --watch: $W_WATCH — $(date +%T)"
    check_once
    wait_for_save
done
