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
# Each mistake gets a solution_tests of its own, in a scratch folder: the patch is applied to a copy of its
# answer's file, that one file compiled with the command ninja compiles the answer with, and linked with the
# other objects of solution_tests as they are built. Then that exercise's test runs: it must fail; where the file
# has a "Named:" line the failure must name the mistake, and where it has none it must name no other. solutions/
# itself is never touched, so an interrupted check leaves nothing to undo, and the mistakes are independent of
# each other: they run side by side, one per core.
#
# First, the same recipe builds each answer file untouched, and its exercises' tests must pass: a recipe that
# broke the build would otherwise make every test fail and every mistake look caught.
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

# build_answer DIR FILE [PATCH]: DIR/solution_tests with FILE of solutions/ copied into DIR, PATCH applied to it
# (none: untouched). Says why on stdout and returns 1 where it cannot.
build_answer() {
    local dir=$1 file=$2 patch=${3:-}
    mkdir -p "$dir/${file%/*}"
    cp "$ROOT/$file" "$dir/$file"
    if [ -n "$patch" ]; then
        # git apply as a plain patch: the scratch folder lies inside this repository, where git apply would skip
        # every path outside the folder and say nothing; GIT_CEILING_DIRECTORIES keeps it from finding the repository.
        if ! (cd "$dir" && GIT_CEILING_DIRECTORIES="$scratch" git apply "$ROOT/$patch" 2>/dev/null); then
            echo "the patch no longer applies to solutions/ (update it)"; return 1
        fi
        if cmp -s "$ROOT/$file" "$dir/$file"; then echo "the patch leaves $file as it is"; return 1; fi
    fi
    local compile obj
    case "$file" in
        solutions/11_gpu/gpu_exercises.cu)  # included by the emulator's test file, found on its include path first
            obj=${object_of[tests/exercises/gpu_exercises_on_cpu.cpp]}
            compile=${compile_of[tests/exercises/gpu_exercises_on_cpu.cpp]}
            compile=${compile/" -I$ROOT/solutions "/" -I$dir/solutions -I$ROOT/solutions "} ;;
        *)
            obj=${object_of[$file]:-}
            [ -n "$obj" ] || { echo "no compile command for $file in $build_dir"; return 1; }
            compile=${compile_of[$file]}
            compile=${compile/" -c $ROOT/$file"/" -c $dir/$file"} ;;
    esac
    compile=${compile/" -o $obj "/" -o $dir/answer.o "}
    local objects=" ${answer_objects[*]} " linked=$link
    objects=${objects/" $obj "/" $dir/answer.o "}
    linked=${linked/" $answers_archive "/"$objects"}
    linked=${linked/" $obj "/" $dir/answer.o "}
    linked=${linked/" -o bin/solution_tests "/" $fuse_ld -o $dir/solution_tests "}
    if ! (cd "$build_dir" && eval "$compile" && eval "$linked") >"$dir/build.log" 2>&1; then
        echo "the patched answer does not compile (a mistake must be one a compiler lets through)"; return 1
    fi
}

# check_one PATCH OUT: builds the mistake's solution_tests, runs its exercise's test, writes one line to OUT.
check_one() {
    local patch=$1 out=$2 name dir why log rc
    local id=${exercise_of[$patch]} what=${what_of[$patch]:-} named=${named_of[$patch]:-} says=${says_of[$patch]:-}
    name=${patch##*/} name=${name%.patch} dir="$scratch/$name"
    if ! why=$(build_answer "$dir" "${file_of[$patch]}" "$patch"); then
        echo "  FAIL $name: $why" >"$out"; rm -rf "$dir"; return
    fi
    # A mistake that corrupts memory can leave the test waiting forever: 60 s, then it counts as caught
    # (tools/progress.sh stops a learner's test at 30 s and says why).
    log=$(timeout 60 "$dir/solution_tests" "[ex$id]" 2>&1) && rc=0 || rc=$?
    rm -rf "$dir"
    if [ "$rc" -eq 124 ]; then
        echo "  ok   $name: caught (the test did not finish within 60 s; progress.sh reports it as a hang)" >"$out"; return
    fi
    if [ "$rc" -eq 0 ]; then
        echo "  FAIL $name: exercise $id's test passes with this mistake: $what" >"$out"; return
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
        { echo "  FAIL $name: exercise $id's test fails but does not say \"$missing\":"
          grep -m2 -E 'FAILED|yours|expected' <<<"$log" | sed 's/^/         /'; } >"$out"
    elif [ -n "$misnamed" ]; then
        { echo "  FAIL $name: exercise $id's test names a mistake (\"$misnamed\") but this file has no Named: line:"
          echo "         add one if that is this mistake, or give the test an input that tells the two apart"; } >"$out"
    else
        echo "  ok   $name: caught${named:+ and named}${says:+ and explained}" >"$out"
    fi
}

# The recipe, proven on the untouched answers: the first answer file the mistakes patch and, where they patch it,
# the GPU answers (the other way in), built as above, pass the tests of every exercise of theirs among the mistakes.
declare -A tags_of=()
for patch in "${pending[@]}"; do
    file=${file_of[$patch]} id=${exercise_of[$patch]}
    case "$file" in solutions/11_gpu/*) ;; *) file=${first_cpp:=$file} ;; esac
    [ "$file" = "${file_of[$patch]}" ] || continue
    case ",${tags_of[$file]:-}," in *",[ex$id],"*) ;; *) tags_of[$file]="${tags_of[$file]:+${tags_of[$file]},}[ex$id]" ;; esac
done
for file in "${!tags_of[@]}"; do
    dir="$scratch/untouched"
    if ! why=$(build_answer "$dir" "$file") || ! "$dir/solution_tests" "${tags_of[$file]}" >"$dir/test.log" 2>&1; then
        cat "$dir/build.log" "$dir/test.log" 2>/dev/null | tail -40
        echo "check_mistakes: solution_tests built from the untouched $file this way fails${why:+ ($why)}: the recipe is wrong, not the tests" >&2
        exit 1
    fi
    rm -rf "$dir"
done

# The mistakes, one per core; their lines are printed in the catalogue's order as they finish.
results="$scratch/results"
mkdir -p "$results"
printed=0
print_done() {
    while [ "$printed" -lt "$n" ] && [ -f "$results/$printed.done" ]; do
        cat "$results/$printed"
        printed=$((printed + 1))
    done
}
cores=$(nproc)
for i in "${!pending[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do
        wait -n || true
        print_done
    done
    (check_one "${pending[$i]}" "$results/$i"; : >"$results/$i.done") &
done
wait
print_done
bad=$(cat "$results"/[0-9]* | grep -c '^  FAIL' || true)
echo "  $((n - bad)) of $n mistakes caught by the exercise tests (each built and run on its own)"
[ "$bad" -eq 0 ]
