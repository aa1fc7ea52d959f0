#!/usr/bin/env bash
# tools/ptxas_report.sh, nvcc's launcher, with a stand-in compiler (no nvcc needed): a compile that succeeds has
# ptxas's lines kept in OBJECT.ptxas and everything else passed on; one that fails passes on all it printed and
# its exit code, and leaves no report. tests/tools/ptxas_report_test.sh ROOT SCRATCH
set -euo pipefail
launcher="$1/tools/ptxas_report.sh"
dir="$2"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
fail() { echo "ptxas_report_test: $*" >&2; exit 1; }
# The stand-in: prints what nvcc -Xptxas -v prints, a warning, writes the object; exits with $STATUS.
cat >compiler.sh <<'STANDIN'
#!/usr/bin/env bash
echo "kernel.cu(3): warning #177-D: variable \"unused\" was declared but never referenced" >&2
echo "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'" >&2
echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" >&2
echo "ptxas info    : Used 4 registers, used 0 barriers" >&2
[ "$STATUS" -ne 0 ] || : >"$2"
exit "$STATUS"
STANDIN
chmod +x compiler.sh

STATUS=0 "$launcher" ./compiler.sh -o ok.o 2>ok.err || fail "a compile that succeeds must exit 0"
[ -f ok.o.ptxas ] || fail "no report ok.o.ptxas beside the object"
[ "$(grep -c . ok.o.ptxas)" -eq 3 ] || fail "the report must hold ptxas's three lines, got: $(cat ok.o.ptxas)"
grep -q "Used 4 registers" ok.o.ptxas || fail "the report lacks the registers line"
grep -q "warning #177-D" ok.err || fail "the compiler's warning was not passed on"
! grep -q "ptxas info" ok.err || fail "ptxas's lines must go to the report, not to the build's output"

rc=0
STATUS=3 "$launcher" ./compiler.sh -o bad.o 2>bad.err || rc=$?
[ "$rc" -eq 3 ] || fail "a failed compile's exit code must pass through (3), got $rc"
[ ! -f bad.o.ptxas ] || fail "a failed compile must leave no report"
grep -q "warning #177-D" bad.err && grep -q "ptxas info" bad.err || fail "a failed compile must pass on all it printed"
echo "ptxas_report.sh: the report kept, the rest passed on; a failed compile's output and exit code passed through"
