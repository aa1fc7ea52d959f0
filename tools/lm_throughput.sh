#!/usr/bin/env bash
# Training throughput (tokens/s) of the ladder's full one-block model: this library (12_language_model
# bench) beside the same model in PyTorch on the CPU (tools/torch_lm_throughput.py), in one run, on the
# same number of threads, alternating so that both see the same load. Prints each measurement, the best of
# each and their ratio. Needs a build (tools/test.sh or cmake --build) and, for the PyTorch side, Debian's
# python3-torch (run with /usr/bin/python3); without it, says so and prints the C++ figure alone.
#
#   tools/lm_throughput.sh [--threads N] [--rounds R] [--full] [--vocab V] [--build DIR]
#     --full: the chapter's size (width 128, context 128, batch 64) instead of the default (64, 64, 32)
#     --vocab: a vocabulary of V tokens (the chapter's BPE: 1024) instead of tiny Shakespeare's 65 bytes; the C++ side
#              is then tools/bench/bench_lm_train, which trains the same model at any vocabulary
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
threads=1 rounds=3 size=() vocab= build="$here/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --full) size=(--full); shift ;;
    --vocab) vocab=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--threads N] [--rounds R] [--full] [--vocab V] [--build DIR]" >&2; exit 2 ;;
  esac
done
prog="$build/bin/12_language_model"
[ -x "$prog" ] || { echo "error: $prog not found: build first (tools/test.sh, or cmake --build $build)" >&2; exit 1; }
if [ ${#size[@]} -gt 0 ]; then d=128 T=128 B=64 steps=10; else d=64 T=64 B=32 steps=40; fi

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $threads thread(s) each"
# Every thread count is pinned: OpenBLAS and OpenMP for both sides.
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
have_torch=0
if /usr/bin/python3 -c "import torch" 2>/dev/null; then have_torch=1; else
  echo "PyTorch: not installed for /usr/bin/python3 (Debian: apt-get install python3-torch) — C++ alone"
fi
if [ -n "$vocab" ]; then
  bench=("$build/bin/bench_lm_train" throughput --vocab "$vocab")
  [ -x "${bench[0]}" ] || { echo "error: ${bench[0]} not found: build first" >&2; exit 1; }
else
  bench=("$prog" bench --tokenizer bytes)  # bytes; --vocab V times a BPE-sized vocabulary
  vocab=$("${bench[@]}" "${size[@]}" --steps 1 --threads "$threads" | sed -n 's/^Training throughput.*vocabulary \([0-9]*\).*/\1/p')
fi
best_c=0 best_t=0
for r in $(seq "$rounds"); do
  c=$("${bench[@]}" "${size[@]}" --steps "$steps" --threads "$threads" 2>/dev/null | sed -n 's/.*tokens\/s \([0-9]*\).*/\1/p')
  echo "round $r: attn (C++) $c tokens/s"
  [ "$c" -gt "$best_c" ] && best_c=$c
  if [ $have_torch = 1 ]; then
    t=$(/usr/bin/python3 "$here/tools/torch_lm_throughput.py" --threads "$threads" --vocab "$vocab" --d $d --T $T \
          --batch $B --steps "$steps" | sed -n 's/.*tokens\/s \([0-9]*\).*/\1/p')
    echo "round $r: PyTorch   $t tokens/s"
    [ "$t" -gt "$best_t" ] && best_t=$t
  fi
done
echo "best of $rounds: attn $best_c tokens/s$( [ $have_torch = 1 ] && echo ", PyTorch $best_t tokens/s, ratio $(awk "BEGIN{printf \"%.2f\", $best_c/$best_t}")x")"
echo "(width $d, context $T, batch $B, vocabulary $vocab; load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
