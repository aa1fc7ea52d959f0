#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run every section program with its default
# (small, fast) settings, showing their outputs in the chapter's order. Pictures (SVG) land in build/tour/, with
# each program's output (<program>.txt) and one page that shows them all: build/tour/index.html.
source "$(dirname "$0")/common.sh"
ensure_packages
build release
mkdir -p build/tour
# Every program runs at its defaults, as a learner types its name (12_language_model's trained experiments at their
# --quick size: about a minute of one core; --medium and --full, the chapter's, take minutes and hours a seed).
mapfile -t programs < <(grep -v '^$' build/chapters.txt)

# The programs run as separate processes, one a core at a time (ATTN_THREADS=1: each on one thread, the same bits
# as on any number; core/side_by_side.hpp). Two threads of one program contend for the lock OpenBLAS takes at every
# product (a 12-block model of 12_language_model --quick that trains in 2.9 s alone takes 5.4 s beside another
# thread); two processes share nothing, so the tour takes about as long as its longer half. Each program's
# output is shown whole, in the chapter's order, as soon as it and every program before it have finished; its
# progress bars go to build/tour/<program>.log. The programs that take seconds start first, then the five long
# ones in an order that keeps both cores busy to the end and shows 04 after a minute (one-core seconds measured on
# 2 cores: 04 69, 08 97, 05 61, 10 94, 12 37, so that 04 + 05 + 12 run on one core while 08 + 10 run on the other:
# about 200 s, where the chapter's order leaves 12_language_model alone on a core at the end; longest first would
# end no sooner and show 04 only after nearly three minutes).
long_ones=(04_learned_attention 08_normalization 05_multi_head 10_block 12_language_model)
order=()
for p in "${programs[@]}"; do [[ " ${long_ones[*]} " == *" $p "* ]] || order+=("$p"); done
for p in "${long_ones[@]}"; do grep -qx "$p" build/chapters.txt && order+=("$p"); done
cores=$(nproc)
declare -A started=()
pids=()
next=0 shown=0 total=${#programs[@]}
rm -f build/tour/*.rc
start() {  # program $1 in the background: stdout to <program>.txt, stderr to .log; at the end its exit code and
           # seconds to .rc
    local program=$1
    (
        cd build/tour || exit 1
        trap 'kill "$child" 2>/dev/null; wait "$child"; exit 143' TERM  # the tour stopped: so does the program
        t0=$SECONDS rc=0
        ATTN_THREADS=1 "../bin/$program" >"$program.txt" 2>"$program.log" &
        child=$!
        wait "$child" || rc=$?
        echo "$rc $((SECONDS - t0))" >"$program.rc.part" && mv "$program.rc.part" "$program.rc"
    ) &
    pids+=($!)
    started[$program]=$SECONDS
}
finished() { [ -f "build/tour/$1.rc" ]; }
still_running() {  # order[0 .. next) have started; those without an exit code still run
    local i
    for ((i = 0; i < next; i++)); do finished "${order[$i]}" || echo "${order[$i]}"; done
}
# a failure below stops the programs still running
trap 'kill "${pids[@]}" 2>/dev/null || true; wait; rm -f build/tour/*.rc' EXIT
while [ "$shown" -lt "$total" ]; do
    mapfile -t running < <(still_running)
    while [ "${#running[@]}" -lt "$cores" ] && [ "$next" -lt "$total" ]; do
        start "${order[$next]}"
        running+=("${order[$next]}")
        next=$((next + 1))
    done
    # every finished program whose turn it is, whole
    while [ "$shown" -lt "$total" ] && finished "${programs[$shown]}"; do
        program=${programs[$shown]}
        read -r rc took <"build/tour/$program.rc"
        [ ! -t 2 ] || printf '\r\033[K' >&2
        say "build/bin/$program (ran $took s)"
        cat "build/tour/$program.txt"
        # 77 is "skipped": a program that needs what this machine lacks (11_gpu_block, built where nvcc
        # exists, needs a CUDA device too). Any other failure stops the tour, with what the program said.
        if [ "$rc" -eq 77 ]; then
            echo "(skipped: no GPU — $program needs a CUDA device; the tour goes on)"
        elif [ "$rc" -ne 0 ]; then
            cat "build/tour/$program.log" >&2
            echo "tools/tour.sh: $program failed (exit $rc)" >&2
            exit "$rc"
        fi
        shown=$((shown + 1))
    done
    if [ "$shown" -lt "$total" ]; then
        if [ -t 2 ]; then  # one line on the terminal: what runs now, and for how long
            line=""
            for p in $(still_running); do line+="  $p $((SECONDS - ${started[$p]})) s"; done
            printf '\r\033[K  [%d of %d shown] running:%s' "$shown" "$total" "$line" >&2
        fi
        sleep 1
    fi
done
wait
python3 tools/tour_html.py --dir build/tour >/dev/null
say "tour done: open build/tour/index.html in a browser (every section's pictures, claims and output)"
