#!/usr/bin/env bash
# The build's launcher for nvcc (common/CMakeLists.txt): tools/ptxas_report.sh NVCC ARGS… -o OBJECT …
# Runs the compile unchanged and keeps what ptxas says of each kernel (-Xptxas -v: registers, stack frame,
# spill stores and loads, per architecture) in OBJECT.ptxas, where tools/check_spills.sh reads it instead of
# compiling every kernel a second time. Everything else the compile prints is passed on, and on a failed
# compile all of it.
set -uo pipefail
object=""
prev=""
for arg in "$@"; do
    [ "$prev" != -o ] || object=$arg
    prev=$arg
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>"$log"
rc=$?
if [ "$rc" -ne 0 ] || [ -z "$object" ]; then
    cat "$log" >&2
    exit "$rc"
fi
# ptxas -v's lines: "ptxas info    : …" and "    N bytes stack frame, N bytes spill stores, N bytes spill loads"
ptxas_lines='^ptxas info|^ +[0-9]+ bytes stack frame'
grep -E "$ptxas_lines" "$log" >"$object.ptxas.tmp" || true
mv "$object.ptxas.tmp" "$object.ptxas"
grep -vE "$ptxas_lines" "$log" >&2 || true
exit 0
