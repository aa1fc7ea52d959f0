#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run every section program in the
# chapter's order with its default (small, fast) settings. Pictures (SVG) land in build/tour/, with each
# program's output (<program>.txt) and one page that shows them all: build/tour/index.html.
source "$(dirname "$0")/common.sh"
ensure_packages
build release
mkdir -p build/tour
# The trained experiments of 12_language_model take about ten minutes a seed at their default size, five seeds
# by default (and hours at --full); the tour runs them at the size the tests use: under two minutes.
declare -A tour_args=([12_language_model]="--quick")
while read -r program; do
    [ -n "$program" ] || continue
    args=${tour_args[$program]:-}
    say "build/bin/$program${args:+ $args}"
    rc=0
    # shellcheck disable=SC2086  # args is a list of flags
    (cd build/tour && "../bin/$program" $args | tee "$program.txt"; exit "${PIPESTATUS[0]}") || rc=$?
    # 77 is "skipped": a program that needs what this machine lacks (11_gpu_block, built where nvcc
    # exists, needs a CUDA device too). Any other failure stops the tour.
    if [ "$rc" -eq 77 ]; then
        echo "(skipped: no GPU — $program needs a CUDA device; the tour goes on)"
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
done < build/chapters.txt
python3 tools/tour_html.py --dir build/tour >/dev/null
say "tour done: open build/tour/index.html in a browser (every section's pictures, claims and output)"
