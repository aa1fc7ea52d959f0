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
    (cd build/tour && "../bin/$program")
done < build/chapters.txt
say "tour done: the SVG pictures are in build/tour/"
