// The BLAS under xtensor-blas and the fast engine's products (OpenBLAS) runs on one thread: the library
// cuts its own work into threads (common/fast/parallel.hpp) or runs side by side (core/side_by_side.hpp),
// and OpenBLAS's own threads beside those would only compete for the same cores.
#pragma once

namespace attn {

// Sets OpenBLAS to one thread, once per process; every later call returns at once (safe from any thread).
void blas_on_one_thread();

}  // namespace attn
