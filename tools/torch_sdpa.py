#!/usr/bin/env python3
"""PyTorch's attention at the shapes of 11_gpu_block's n² table, for comparison on the same GPU.

One attention layer's core: q, k, v of shape (1, heads, T, d_head), fp32, causal, through
torch.nn.functional.scaled_dot_product_attention with each backend PyTorch offers for fp32:

  math       the reference: materialises the (heads, T, T) scores and weights, like our v1/v2
  efficient  the memory-efficient kernel (xFormers/CUTLASS): tiled, online softmax, like our v3
  default    whatever PyTorch picks by itself

ms: best of up to 10 runs after a warm-up, timed with CUDA events. GFLOP/s counts the same useful
work as 11_gpu_block: 4 · d_head · T (T + 1) / 2 flops per head. MB: torch.cuda.max_memory_allocated
during the call, above what was allocated before it (q, k, v, out are not counted). fp32 matmuls are
kept in full fp32 (no TF32), as ours are. Run by tools/gpu_check.sh; usable on its own:

    python3 tools/torch_sdpa.py --min-T 128 --max-T 131072
"""
import argparse
import math
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-T", type=int, default=128, help="first row (tokens)")
    parser.add_argument("--max-T", type=int, default=131072, help="last row: rows double from --min-T up to this")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--d-head", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:  # the check reports it and goes on
        print(f"torch_sdpa: PyTorch is not importable here ({e}); skipped")
        return 77
    if not torch.cuda.is_available():
        print("torch_sdpa: PyTorch sees no CUDA device; skipped")
        return 77

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}, {props.name}, {props.multi_processor_count} SMs, "
          f"{props.total_memory / 2**20:,.0f} MiB")
    print(f"scaled_dot_product_attention, fp32, causal, q k v (1, {args.heads}, T, {args.d_head}); "
          "ms best of up to 10 after a warm-up (CUDA events)")

    backends = [("math", [SDPBackend.MATH]), ("efficient", [SDPBackend.EFFICIENT_ATTENTION]), ("default", None)]
    gen = torch.Generator(device=dev).manual_seed(args.seed)
    header = f"  {'tokens':>8}" + "".join(f"  {name + ' ms':>14} {'GFLOP/s':>8} {'MB':>9}" for name, _ in backends)
    print(header)

    def time_ms(fn) -> float:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)

    T = args.min_T
    slow = {name: False for name, _ in backends}
    while T <= args.max_T:
        flops = 4.0 * args.d_head * args.heads * T * (T + 1) / 2.0
        cells = []
        try:
            q, k, v = (torch.randn(1, args.heads, T, args.d_head, device=dev, dtype=torch.float32, generator=gen)
                       for _ in range(3))
        except torch.cuda.OutOfMemoryError:
            print(f"  {T:>8}  OUT OF MEMORY (q, k, v)")
            break
        for name, which in backends:
            if slow[name]:
                cells.append(f"  {'(too slow)':>14} {'-':>8} {'-':>9}")
                continue
            def run():
                if which is None:
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
                with sdpa_kernel(which):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                base = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                first = time_ms(run)  # warm-up (and the peak)
                peak = torch.cuda.max_memory_allocated() - base
                best = first
                reps = max(0, min(10, int(1000.0 / max(first, 1e-3))))
                for _ in range(reps):
                    best = min(best, time_ms(run))
                if best * 4.5 > 20000:
                    slow[name] = True
                cells.append(f"  {best:>14.3f} {flops / (best * 1e-3) / 1e9:>8.0f} {peak / 2**20:>9.1f}")
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                cells.append(f"  {'OUT OF MEMORY':>14} {'-':>8} {'-':>9}")
            except RuntimeError as e:  # e.g. no kernel for this backend and shape
                cells.append(f"  {'n/a':>14} {'-':>8} {'-':>9}")
                print(f"    ({name} at T = {T}: {str(e).splitlines()[0][:100]})", file=sys.stderr)
        print(f"  {T:>8}" + "".join(cells), flush=True)
        del q, k, v
        torch.cuda.empty_cache()
        T *= 2
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"torch_sdpa: {time.time() - t0:.1f} s")
    sys.exit(rc)
