#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run every section program in the
# chapter's order with its default (small, fast) settings. Pictures (SVG) land in build/tour/.
source "$(dirname "$0")/common.sh"
ensure_packages
build release
mkdir -p build/tour
while read -r program; do
    [ -n "$program" ] || continue
    say "build/bin/$program"
    rc=0
    (cd build/tour && "../bin/$program") || rc=$?
    # 77 is "skipped": a program that needs what this machine lacks (11_gpu_block, built where nvcc
    # exists, needs a CUDA device too). Any other failure stops the tour.
    if [ "$rc" -eq 77 ]; then
        echo "(skipped: no GPU — $program needs a CUDA device; the tour goes on)"
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
done < build/chapters.txt
say "tour done: the SVG pictures are in build/tour/"
