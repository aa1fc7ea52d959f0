// Section 9.8, the n² wall and FlashAttention — a benchmark: how fast is causal multi-head attention on
// this machine, measured against the SGEMM rate of the same machine in the same run?
//
//   (a) the SGEMM rate with attn::fast::sgemm: a 1024³ reference, the two shapes of one head's attention
//       (q kᵀ: (T, d_head) @ (d_head, T), and w v: (T, T) @ (T, d_head)), and the small tile products the
//       tiled attention runs, on one thread as each worker runs them;
//   (b) causal attention forward at d_model = 512, h = 8, B = 1: materialised (causal_attention_forward,
//       which holds (h, T, T) scores and weights) and tiled (tiled_causal_attention, FlashAttention's
//       recurrence, never more than a tile of scores), for T = 512 … --max-T, with useful GFLOP/s, the
//       fraction of the SGEMM rate and the peak memory; the tiled one alone at --long-T, where the
//       materialised one would need h · T² · 4 B per matrix; and the tiled one for tiles of 32 … 256.
//
// Numbers vary run to run and with the machine's load (printed at the start); this program is not a test.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include "core/memory.hpp"
#include "core/rng.hpp"
#include "fast/flash.hpp"
#include "fast/matmul.hpp"
#include "fast/multi_head.hpp"
#include "math/stats.hpp"
#include "report/cli.hpp"
#include "report/table.hpp"

using namespace attn;

namespace {

constexpr std::size_t d_model = 512, n_heads = 8, d_head = d_model / n_heads;
constexpr double MB = 1024.0 * 1024.0;

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (all threads, user + system), in milliseconds.
double cpu_ms() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

// The best of `reps` timings of fn: wall-clock ms, and the process's CPU ms (both the least seen).
struct Timing {
    double wall = 1e300, cpu = 1e300;
    void add(double w, double c) { wall = std::min(wall, w), cpu = std::min(cpu, c); }
};
Timing best_of(int reps, const std::function<void()>& fn) {
    Timing t;
    for (int r = 0; r < reps; ++r) {
        const double start = now_ms(), start_cpu = cpu_ms();
        fn();
        t.add(now_ms() - start, cpu_ms() - start_cpu);
    }
    return t;
}

std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(f >> one >> five >> fifteen)) return "unknown";
    return one + " " + five + " " + fifteen + " (1, 5, 15 min)";
}

// CPU time of the calling thread alone, in milliseconds. A product on one BLAS thread runs in the caller;
// the process's CPU time would also count OpenBLAS's idle threads, which spin for a while after a
// multi-threaded product before they sleep.
double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// GFLOP/s of C = A op(B) with attn::fast::sgemm on random buffers: by the wall clock, and per second of the
// calling thread's CPU time (meaningful when BLAS runs on one thread); lda / ldb are the widths the
// caller has in its tensors (d_model for a head's columns inside (T, d_model)). Small products repeat
// until ≥ 20 ms.
struct Rate {
    double wall = 0, cpu = 0;
};
Rate sgemm_rate(int m, int n, int k, Op op_b, int lda, int ldb, int reps, Rng& rng) {
    std::vector<float> a(static_cast<std::size_t>(m) * lda), b(static_cast<std::size_t>(op_b == Op::transposed ? n : k) * ldb),
        c(static_cast<std::size_t>(m) * n);
    rng.fill_normal(a.data(), a.size());
    rng.fill_normal(b.data(), b.size());
    const double flops = 2.0 * m * n * k;
    const int inner = std::max(1, static_cast<int>(2e9 / flops / 50));  // ≈ 20 ms at 100 GFLOP/s
    auto run = [&] {
        for (int i = 0; i < inner; ++i) fast::sgemm(Op::as_is, op_b, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), n);
    };
    run();  // warm: OpenBLAS's buffers, the caches
    Timing t;
    for (int r = 0; r < reps; ++r) {
        const double start = now_ms(), start_cpu = thread_cpu_ms();
        run();
        t.add(now_ms() - start, thread_cpu_ms() - start_cpu);
    }
    return {flops * inner / (t.wall * 1e6), flops * inner / (t.cpu * 1e6)};
}

// Useful flops of causal attention: 2 products (q kᵀ and w v) × 2 flops per multiply-add × d_model
// (summed over the heads) × T(T+1)/2 (query, key) pairs with key ≤ query.
double useful_flops(std::size_t T) { return 2.0 * static_cast<double>(d_model) * static_cast<double>(T) * (T + 1.0); }

// Flops the tiled attention really runs: whole tiles up to the diagonal (the masked half of each
// diagonal tile included), 2 products × 2 flops × d_model per (query, key) pair computed.
double tiled_flops(std::size_t T, std::size_t tile) {
    tile = std::min(tile, T);
    const std::size_t n_tiles = (T + tile - 1) / tile;
    double pairs = 0;
    for (std::size_t qt = 0; qt < n_tiles; ++qt) {
        const double rows = static_cast<double>(std::min(T, (qt + 1) * tile) - qt * tile);
        pairs += rows * static_cast<double>(std::min(T, (qt + 1) * tile));  // keys 0 … end of the diagonal tile
    }
    return 4.0 * static_cast<double>(d_model) * pairs;
}

struct Run {
    Timing time;
    double peak_mb = 0;
    Mat out;
};

// Materialised: one call measured for its peak memory, then the best time of `reps` (the first included).
Run run_materialised(const Mat& q, const Mat& k, const Mat& v, std::size_t T, int reps) {
    Run r;
    r.peak_mb = static_cast<double>(measure_peak_memory([&] {
                    const double start = now_ms(), start_cpu = cpu_ms();
                    fast::AttentionCache cache;
                    r.out = fast::causal_attention_forward(q, k, v, 1, T, n_heads, cache);
                    r.time.add(now_ms() - start, cpu_ms() - start_cpu);
                }).rise()) / MB;
    const Timing rest = best_of(reps - 1, [&] {
        fast::AttentionCache cache;
        const Mat out = fast::causal_attention_forward(q, k, v, 1, T, n_heads, cache);
    });
    r.time.add(rest.wall, rest.cpu);
    return r;
}

Run run_tiled(const Mat& q, const Mat& k, const Mat& v, std::size_t T, std::size_t tile, std::size_t threads, int reps) {
    // After a multi-threaded product OpenBLAS's idle threads spin (yielding) for about 0.1 s before they
    // sleep: let them, so that they neither share the cores with the workers nor add to the CPU time.
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    Run r;
    r.peak_mb = static_cast<double>(measure_peak_memory([&] {
                    const double start = now_ms(), start_cpu = cpu_ms();
                    r.out = fast::tiled_causal_attention(q, k, v, 1, T, n_heads, tile, true, threads);
                    r.time.add(now_ms() - start, cpu_ms() - start_cpu);
                }).rise()) / MB;
    const Timing rest = best_of(reps - 1, [&] {
        const Mat out = fast::tiled_causal_attention(q, k, v, 1, T, n_heads, tile, true, threads);
    });
    r.time.add(rest.wall, rest.cpu);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 0, max_T = 4096, long_T = 16384, reps = 3, tile = 64;
    Cli cli("bench_attention", "Section 9.8 — the n² wall and FlashAttention: attention against this machine's SGEMM rate");
    cli.add("--threads", threads, "threads for BLAS and for the tiled attention's workers (0 = all cores)", 0, 1024);
    cli.add("--max-T", max_T, "largest T of the materialised-vs-tiled table (T = 512, 1024, … up to it)", 512, 8192);
    cli.add("--long-T", long_T, "T for the tiled attention alone (0 = skip); tiles keep memory linear in T, time grows as T^2", 0, 65536);
    cli.add("--reps", reps, "timed repetitions of each measurement (the best is reported); a few suffice", 1, 100);
    cli.add("--tile", tile, "query and key rows per tile of the tiled attention in the main table", 1, 4096);

    return run_program(cli, argc, argv, [&] {
        const std::size_t n_threads = threads > 0 ? static_cast<std::size_t>(threads)
                                                  : std::max(1u, std::thread::hardware_concurrency());
        std::cout << cli.title() << "\n\n";
        std::cout << "This machine: " << std::thread::hardware_concurrency() << " hardware threads; measuring with "
                  << n_threads << "; load average at start " << load_average() << "\n";
        std::cout << "Times are the best of " << reps << " runs. Numbers vary run to run and with the load.\n\n";
        Rng rng(0, 98);

        // --- (a) the SGEMM rate of this machine --------------------------------------------------------
        fast::fix_blas_threads(static_cast<int>(n_threads));
        std::cout << "(a) SGEMM with attn::fast::sgemm (OpenBLAS), " << n_threads << " thread(s)\n";
        Table st(std::cout, {{"product", 44}, {"GFLOP/s", 10, 1}}, "  ");
        st.header();
        const double reference = sgemm_rate(1024, 1024, 1024, Op::as_is, 1024, 1024, reps, rng).wall;
        st.row({"reference (1024, 1024) @ (1024, 1024)", reference});
        for (int T = 512; T <= max_T; T *= 2) {
            st.row({"q kT, one head: (" + std::to_string(T) + ", 64) @ (64, " + std::to_string(T) + ")",
                    sgemm_rate(T, T, 64, Op::transposed, 64, 64, reps, rng).wall});
            st.row({"w v,  one head: (" + std::to_string(T) + ", " + std::to_string(T) + ") @ (" + std::to_string(T) + ", 64)",
                    sgemm_rate(T, 64, T, Op::as_is, T, 64, reps, rng).wall});
        }
        fast::fix_blas_threads(1);
        const double reference_core = sgemm_rate(1024, 1024, 1024, Op::as_is, 1024, 1024, reps, rng).cpu;
        std::cout << "  \"of SGEMM\" below divides by the reference's rate, " << fmt(reference, 1) << " GFLOP/s on "
                  << n_threads << " thread(s).\n"
                  << "  \"per core\" divides GFLOP per CPU-second by the reference's on one thread, " << fmt(reference_core, 1)
                  << " GFLOP per CPU-second:\n"
                  << "  time another program holds a core does not count there (a busy machine's wall clock does).\n\n";

        // The tile products, on one thread, with q, k, v's row stride d_model as the tiled attention reads them.
        fast::fix_blas_threads(1);
        std::cout << "    The tiled attention's products, one thread (each worker runs its own), row stride "
                  << d_model << ", in GFLOP per CPU-second\n";
        Table tt(std::cout, {{"tile", 10, 0}, {"scores = q kT", 16, 1}, {"acc += p v", 14, 1}, {"both, x threads", 18, 1}},
                 "    ");
        tt.header();
        std::vector<double> tile_rate;  // per thread, mean of the two products (equal flops)
        const std::vector<std::size_t> tiles = {32, 64, 128, 256};
        for (std::size_t t : tiles) {
            const int ti = static_cast<int>(t);
            const double s = sgemm_rate(ti, ti, 64, Op::transposed, d_model, d_model, reps, rng).cpu;
            const double pv = sgemm_rate(ti, 64, ti, Op::as_is, ti, d_model, reps, rng).cpu;
            const double both = 2.0 / (1.0 / s + 1.0 / pv);  // equal flops each: the harmonic mean
            tile_rate.push_back(both);
            tt.row({t, s, pv, both * static_cast<double>(n_threads)});
        }
        auto tile_rate_1 = [&](std::size_t t) {  // GFLOP/s of the tile products on one thread
            for (std::size_t i = 0; i < tiles.size(); ++i)
                if (tiles[i] == t) return tile_rate[i];
            return 0.0;
        };
        std::cout << "\n";

        // --- (b) causal attention forward --------------------------------------------------------------
        std::cout << "(b) Causal attention forward, d_model = " << d_model << ", h = " << n_heads << ", d_head = " << d_head
                  << ", B = 1\n"
                  << "  useful flops = 2 products (q kT, w v) x 2 flops x d_model x T(T+1)/2 causal pairs = 2 d T(T+1)\n"
                  << "  materialised: causal_attention_forward, BLAS on " << n_threads
                  << " thread(s); tiled: tiled_causal_attention, tile = " << tile << ", " << n_threads
                  << " worker(s) with one BLAS thread each\n"
                  << "  peak MB: rise of the peak resident memory during one call (core/memory.hpp); q, k, v exist before\n";
        Table at(std::cout, {{"T", 7, 0}, {"method", 14}, {"ms", 9, 1}, {"GFLOP/s", 9, 1}, {"of SGEMM", 10, 2},
                             {"per core", 10, 2}, {"x4 time", 9, 2}, {"T^2 MB", 8, 0}, {"peak MB", 9, 1}, {"max |diff|", 12}},
                 "  ");
        at.header();
        // useful GFLOP per CPU-second, as a fraction of one thread's SGEMM per CPU-second
        auto per_core = [&](std::size_t T, const Timing& t) { return useful_flops(T) / (t.cpu * 1e6) / reference_core; };
        double prev_mat = 0, prev_tiled = 0, last_fraction = 0, last_per_core = 0;
        std::size_t last_T = 0;
        for (std::size_t T = 512; T <= static_cast<std::size_t>(max_T); T *= 2) {
            const Mat q = rng.normal_mat(T, d_model), k = rng.normal_mat(T, d_model), v = rng.normal_mat(T, d_model);
            fast::fix_blas_threads(static_cast<int>(n_threads));
            const Run mat = run_materialised(q, k, v, T, reps);
            fast::fix_blas_threads(1);
            const Run tiled = run_tiled(q, k, v, T, static_cast<std::size_t>(tile), n_threads, reps);
            const double attn_mb = static_cast<double>(n_heads * T * T) * 4.0 / MB;  // one (h, T, T) fp32 matrix
            const double ms_mat = mat.time.wall, ms_tiled = tiled.time.wall;
            const double gf_mat = useful_flops(T) / (ms_mat * 1e6), gf_tiled = useful_flops(T) / (ms_tiled * 1e6);
            at.row({T, "materialised", ms_mat, gf_mat, gf_mat / reference, per_core(T, mat.time),
                    prev_mat > 0 ? Cell(ms_mat / prev_mat) : Cell("-"), attn_mb, mat.peak_mb, "-"});
            at.row({T, "tiled", ms_tiled, gf_tiled, gf_tiled / reference, per_core(T, tiled.time),
                    prev_tiled > 0 ? Cell(ms_tiled / prev_tiled) : Cell("-"), attn_mb, tiled.peak_mb,
                    fmt_sci(max_abs_diff(tiled.out, mat.out), 1)});
            prev_mat = ms_mat, prev_tiled = ms_tiled;
            last_T = T, last_fraction = gf_tiled / reference, last_per_core = per_core(T, tiled.time);
        }
        std::cout << "  ms: wall clock. per core well above of SGEMM: other programs held the cores (OpenBLAS threads that\n"
                  << "  spin while they wait lower per core). x4 time: time / time at T/2 (quadratic: 4). T^2 MB: h T^2 x 4 B,\n"
                  << "  one attention matrix; the materialised forward holds two (scores and weights). max |diff|: tiled\n"
                  << "  against materialised.\n";
        std::cout << "  At T = " << last_T << " the tiled forward runs at " << fmt(last_fraction, 2)
                  << " of the reference SGEMM rate by the wall clock, " << fmt(last_per_core, 2)
                  << " per core; the aim, at least 0.50 at T = 4096, is " << (last_fraction >= 0.5 ? "met" : "not met")
                  << " by the wall clock in this run.\n\n";

        // --- tile sizes ----------------------------------------------------------------------------------
        const std::size_t sweep_T = static_cast<std::size_t>(max_T);
        std::cout << "Tiled attention at T = " << sweep_T << " by tile size (" << n_threads << " worker(s))\n";
        Table sw(std::cout, {{"tile", 7, 0}, {"ms", 9, 1}, {"GFLOP/s", 9, 1}, {"of SGEMM", 10, 2}, {"per core", 10, 2},
                             {"CPU ms", 9, 1}, {"products", 10, 1}, {"rest", 9, 1}, {"peak MB", 9, 1}},
                 "  ");
        sw.header();
        {
            const Mat q = rng.normal_mat(sweep_T, d_model), k = rng.normal_mat(sweep_T, d_model), v = rng.normal_mat(sweep_T, d_model);
            fast::fix_blas_threads(1);
            for (std::size_t t : tiles) {
                const Run r = run_tiled(q, k, v, sweep_T, t, n_threads, reps);
                const double gf = useful_flops(sweep_T) / (r.time.wall * 1e6);
                const double products_ms = tiled_flops(sweep_T, t) / (tile_rate_1(t) * 1e6);  // CPU ms
                sw.row({t, r.time.wall, gf, gf / reference, per_core(sweep_T, r.time), r.time.cpu, products_ms,
                        r.time.cpu - products_ms, r.peak_mb});
            }
        }
        std::cout << "  CPU ms: all threads' CPU time. products: the CPU ms its tile products alone take (their flops,\n"
                  << "  whole diagonal tiles included, at the one-thread tile rate above); rest = CPU ms - products: the\n"
                  << "  softmax (max, exp, sum), the rescale, the masking, the threads, and the products' cache misses.\n\n";

        // --- a long sequence, tiled only ------------------------------------------------------------------
        if (long_T > 0) {
            const std::size_t T = static_cast<std::size_t>(long_T);
            const double attn_gib = static_cast<double>(n_heads * T * T) * 4.0 / (1024.0 * MB);
            std::cout << "Tiled attention alone at T = " << T << " (tile = " << tile << "; materialised would hold "
                      << fmt(attn_gib, 1) << " GiB of scores and as much of weights: not run)\n";
            const Mat q = rng.normal_mat(T, d_model), k = rng.normal_mat(T, d_model), v = rng.normal_mat(T, d_model);
            fast::fix_blas_threads(1);
            const Run r = run_tiled(q, k, v, T, static_cast<std::size_t>(tile), n_threads, std::min(reps, 2));
            const double gf = useful_flops(T) / (r.time.wall * 1e6);
            Table lt(std::cout, {{"T", 7, 0}, {"ms", 9, 1}, {"GFLOP/s", 9, 1}, {"of SGEMM", 10, 2}, {"per core", 10, 2},
                                 {"peak MB", 9, 1}, {"q, k, v, out MB", 17, 1}},
                     "  ");
            lt.header();
            lt.row({T, r.time.wall, gf, gf / reference, per_core(T, r.time), r.peak_mb,
                    4.0 * static_cast<double>(T * d_model) * 4.0 / MB});
            std::cout << "  peak MB counts what the call adds: the output (T x d_model x 4 B) and each worker's tile buffers.\n";
        }
        fast::fix_blas_threads(0);
        std::cout << "\nload average at the end " << load_average() << "\n";
    });
}
