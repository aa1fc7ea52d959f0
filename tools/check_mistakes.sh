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
# The mistakes go in rounds, at most one patch per file of solutions/ a round. Each patch is applied to a copy of
# its answer's file in a scratch folder, and the copies of a round are compiled side by side, one per core, with
# the command ninja compiles that answer with; one solution_tests a round is linked from them and the other
# objects as they are built. Then each mistake's exercise test runs: it must fail; where the file has a "Named:"
# line the failure must name the mistake, and where it has none it must name no other. The answers of one section
# call nothing of another's, and each test runs one exercise, so a round's patches cannot hide or cause each
# other's failures. solutions/ itself is never touched: an interrupted check leaves nothing to undo.
#
# First, the same recipe builds answers untouched, and their exercises' tests must pass: a recipe that broke the
# build would otherwise make every test fail and every mistake look caught.
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
cmake --build "$build_dir" --target solution_tests >/dev/null  # its objects, as the answers are now

# How ninja builds solution_tests: a compile command per answer file and the link (without the test discovery
# that follows it). They run in the build folder.
commands=$(ninja -C "$build_dir" -t commands solution_tests 2>/dev/null) ||
    { echo "check_mistakes: $build_dir is not a Ninja build (cmake --preset release makes one)" >&2; exit 1; }
link=$(grep -F -- " -o bin/solution_tests " <<<"$commands" | tail -1 | sed -e 's/^: && //' -e 's/ && cd .*//')
answers_archive=solutions/libattn_solutions.a
[[ "$link" == *" $answers_archive "* ]] || { echo "check_mistakes: the link of solution_tests no longer names $answers_archive" >&2; exit 1; }
# The answers' objects (what the archive holds), each with its compile command, by source file.
declare -A compile_of=() object_of=()
answer_objects=()
while IFS= read -r line; do
    src=$(sed -n 's|.* -c \([^ ]*\)$|\1|p' <<<"$line")
    obj=$(sed -n 's|.* -o \([^ ]*\) -c .*|\1|p' <<<"$line")
    [ -n "$src" ] && [ -n "$obj" ] || continue
    rel=${src#"$ROOT/"}
    compile_of[$rel]=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//' <<<"$line") object_of[$rel]=$obj
    case "$rel" in solutions/*) answer_objects+=("$obj") ;; esac
done < <(grep -E -- " -c $ROOT/(solutions/|tests/exercises/gpu_exercises_on_cpu\.cpp$)" <<<"$commands")
[ "${#answer_objects[@]}" -gt 0 ] || { echo "check_mistakes: found no compile command of solutions/ in $build_dir" >&2; exit 1; }
# A faster linker where there is one (0.2 s instead of 0.5 for solution_tests); the default one otherwise.
fuse_ld=""
for ld in gold lld; do
    if echo 'int main(){}' | c++ -x c++ -fuse-ld=$ld -o /dev/null - 2>/dev/null; then fuse_ld="-fuse-ld=$ld"; break; fi
done

pending=()
for patch in tests/mistakes/*.patch; do
    case "$patch" in *"${1:-}"*) pending+=("$patch") ;; esac
done
n=${#pending[@]}
[ "$n" -gt 0 ] || { echo "check_mistakes: no mistake matches '${1:-}'" >&2; exit 1; }
# Each patch's header lines and the file of solutions/ it changes (one each), read once.
declare -A exercise_of=() what_of=() named_of=() says_of=() file_of=()
for patch in "${pending[@]}"; do
    while IFS= read -r line; do
        case "$line" in
            "Exercise: "*) exercise_of[$patch]=${line#Exercise: } ;;
            "Mistake: "*) what_of[$patch]=${line#Mistake: } ;;
            "Named: "*) named_of[$patch]=${line#Named: } ;;
            "Says: "*) says_of[$patch]=${line#Says: } ;;
            "diff --git a/"*) line=${line#diff --git a/}; file_of[$patch]=${line%% *}; break ;;
        esac
    done <"$patch"
    [ -n "${file_of[$patch]:-}" ] && [ -n "${exercise_of[$patch]:-}" ] ||
        { echo "check_mistakes: $patch has no Exercise: line or no diff of a file of solutions/" >&2; exit 1; }
done

scratch="$ROOT/$build_dir/mistakes"
rm -rf "$scratch" && mkdir -p "$scratch"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM

# compile_answer DIR FILE [PATCH]: FILE of solutions/ copied into DIR, PATCH applied to it (none: untouched),
# compiled to DIR/answer.o. Where it cannot, says why in DIR/why and returns 1.
compile_answer() {
    local dir=$1 file=$2 patch=${3:-}
    mkdir -p "$dir/${file%/*}"
    cp "$ROOT/$file" "$dir/$file"
    if [ -n "$patch" ]; then
        # git apply as a plain patch: the scratch folder lies inside this repository, where git apply would skip
        # every path outside the folder and say nothing; GIT_CEILING_DIRECTORIES keeps it from finding the repository.
        if ! (cd "$dir" && GIT_CEILING_DIRECTORIES="$scratch" git apply "$ROOT/$patch" 2>/dev/null); then
            echo "the patch no longer applies to solutions/ (update it)" >"$dir/why"; return 1
        fi
        if cmp -s "$ROOT/$file" "$dir/$file"; then echo "the patch leaves $file as it is" >"$dir/why"; return 1; fi
    fi
    # The translation unit that compiles FILE: the file itself, or, for the GPU answers, the emulator's test file
    # that includes them, made to find the copy first on its include path.
    local unit=$file
    [ "$file" != solutions/11_gpu/gpu_exercises.cu ] || unit=tests/exercises/gpu_exercises_on_cpu.cpp
    local obj=${object_of[$unit]:-} compile=${compile_of[$unit]:-}
    [ -n "$obj" ] || { echo "no compile command for $unit in $build_dir" >"$dir/why"; return 1; }
    compile=${compile/" -c $ROOT/$file"/" -c $dir/$file"}
    compile=${compile/" -I$ROOT/solutions "/" -I$dir/solutions -I$ROOT/solutions "}
    echo "$obj" >"$dir/object"
    compile=${compile/" -o $obj "/" -o $dir/answer.o "}
    if ! (cd "$build_dir" && eval "$compile") >"$dir/build.log" 2>&1; then
        echo "the patched answer does not compile (a mistake must be one a compiler lets through)" >"$dir/why"; return 1
    fi
}

# compile_all DIR...: compile_answer for each DIR (its file and patch in DIR/args), one per core at a time.
compile_all() {
    local dir running=0
    for dir; do
        if [ "$running" -ge "$cores" ]; then wait -n || true; running=$((running - 1)); fi
        (compile_answer "$dir" $(<"$dir/args")) &
        running=$((running + 1))
    done
    wait
}

# link_answers OUT DIR...: solution_tests at OUT, each DIR's answer.o in place of the object it stands for.
link_answers() {
    local out=$1 dir linked=${link/" $answers_archive "/" ${answer_objects[*]} "}
    shift
    for dir; do linked=${linked/" $(<"$dir/object") "/" $dir/answer.o "}; done
    linked=${linked/" -o bin/solution_tests "/" $fuse_ld -o $out "}
    (cd "$build_dir" && eval "$linked") >"$out.log" 2>&1
}

# judge PATCH BIN: runs the mistake's exercise test with BIN and prints its line.
judge() {
    local patch=$1 bin=$2 log rc
    local id=${exercise_of[$patch]} what=${what_of[$patch]:-} named=${named_of[$patch]:-} says=${says_of[$patch]:-}
    local name=${patch##*/}
    name=${name%.patch}
    # A mistake that corrupts memory can leave the test waiting forever: 60 s, then it counts as caught
    # (tools/progress.sh stops a learner's test at 30 s and says why).
    log=$(timeout 60 "$bin" "[ex$id]" 2>&1) && rc=0 || rc=$?
    if [ "$rc" -eq 124 ]; then
        echo "  ok   $name: caught (the test did not finish within 60 s; progress.sh reports it as a hang)"; return
    fi
    if [ "$rc" -eq 0 ]; then
        echo "  FAIL $name: exercise $id's test passes with this mistake: $what"; bad=$((bad + 1)); return
    fi
    # What the failure must contain: the mistake's name, as the tests say it, and the Says: text.
    # Catch wraps long messages: compare with the line breaks and runs of spaces folded into one space.
    local words flat missing="" misnamed="" want
    read -r -d '' -a words <<<"$log" || true
    flat="${words[*]}"
    for want in ${named:+"this is exactly what $named"} ${says:+"$says"}; do
        [[ "$flat" == *"$want"* ]] || { missing=$want; break; }
    done
    # A mistake the catalogue does not name must not be given another mistake's name: the test may name
    # one only when its input tells that one apart from the others.
    if [ -z "$named" ] && [[ "$flat" =~ this\ is\ exactly\ what\ .{0,80}\ gives|each\ of\ these\ mistakes\ gives\ exactly\ this ]]; then
        misnamed=${BASH_REMATCH[0]}
    fi
    if [ -n "$missing" ]; then
        echo "  FAIL $name: exercise $id's test fails but does not say \"$missing\":"
        grep -m2 -E 'FAILED|yours|expected' <<<"$log" | sed 's/^/         /'
        bad=$((bad + 1))
    elif [ -n "$misnamed" ]; then
        echo "  FAIL $name: exercise $id's test names a mistake (\"$misnamed\") but this file has no Named: line:"
        echo "         add one if that is this mistake, or give the test an input that tells the two apart"
        bad=$((bad + 1))
    else
        echo "  ok   $name: caught${named:+ and named}${says:+ and explained}"
    fi
}

cores=$(nproc)
bad=0

# The recipe, proven on the untouched answers: the first answer file the mistakes patch and, where they patch it,
# the GPU answers (the other way in), built as the rounds are, pass the tests of every exercise of theirs here.
declare -A tags_of=()
for patch in "${pending[@]}"; do
    file=${file_of[$patch]} id=${exercise_of[$patch]}
    case "$file" in solutions/11_gpu/*) ;; *) file=${first_cpp:=$file} ;; esac
    [ "$file" = "${file_of[$patch]}" ] || continue
    case ",${tags_of[$file]:-}," in *",[ex$id],"*) ;; *) tags_of[$file]="${tags_of[$file]:+${tags_of[$file]},}[ex$id]" ;; esac
done
dirs=() tags=""
for file in "${!tags_of[@]}"; do
    dir="$scratch/untouched/${file##*/}"
    mkdir -p "$dir" && echo "$file" >"$dir/args"
    dirs+=("$dir") tags="${tags:+$tags,}${tags_of[$file]}"
done
compile_all "${dirs[@]}"
if ! link_answers "$scratch/untouched/solution_tests" "${dirs[@]}" || ! "$scratch/untouched/solution_tests" "$tags" >"$scratch/untouched/test.log" 2>&1; then
    { cat "$scratch"/untouched/*/why "$scratch"/untouched/*/build.log "$scratch/untouched/solution_tests.log" \
          "$scratch/untouched/test.log" 2>/dev/null || true; } | tail -40
    echo "check_mistakes: solution_tests built this way from the untouched answers fails (above): the recipe is wrong, not the tests" >&2
    exit 1
fi

round=0
while [ "${#pending[@]}" -gt 0 ]; do
    round=$((round + 1))
    declare -A taken=()
    this=() later=() dirs=()
    for patch in "${pending[@]}"; do
        file=${file_of[$patch]}
        if [ -n "${taken[$file]:-}" ]; then later+=("$patch"); continue; fi
        taken[$file]=1 this+=("$patch")
        name=${patch##*/} dir="$scratch/round$round/${name%.patch}"
        mkdir -p "$dir" && echo "$file $patch" >"$dir/args"
        dirs+=("$dir")
    done
    unset taken
    pending=("${later[@]}")
    compile_all "${dirs[@]}"
    built=()
    for dir in "${dirs[@]}"; do [ -f "$dir/why" ] || built+=("$dir"); done
    bin="$scratch/round$round/solution_tests"
    # One link for the round; if it fails (a patch that removes what another file needs), each alone, to say which.
    round_linked=1
    [ "${#built[@]}" -gt 0 ] && link_answers "$bin" "${built[@]}" || round_linked=0
    for i in "${!this[@]}"; do
        patch=${this[$i]} dir=${dirs[$i]} name=${dirs[$i]##*/}
        if [ -f "$dir/why" ]; then
            echo "  FAIL $name: $(<"$dir/why")"; bad=$((bad + 1)); continue
        fi
        test_bin=$bin
        if [ "$round_linked" -eq 0 ]; then
            test_bin="$dir/solution_tests"
            if ! link_answers "$test_bin" "$dir"; then
                echo "  FAIL $name: the patched answer does not link (a mistake must be one a compiler lets through)"; bad=$((bad + 1)); continue
            fi
        fi
        judge "$patch" "$test_bin"
    done
    rm -rf "$scratch/round$round"
done
echo "  $((n - bad)) of $n mistakes caught by the exercise tests ($round builds)"
[ "$bad" -eq 0 ]
