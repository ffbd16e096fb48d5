// The ABI between the runtime (this directory) and the C++ that tracejit generates
// (tracejit/backend_cpu/codegen.py), written once: the executor includes this file, and the
// code generator copies its text into every translation unit it writes (so a generated
// unit stays self-contained: its text is its cache key, and a failed one can be rebuilt
// from the copy kept beside the error). Plain C structs with include guards, no namespace.
#ifndef TRACEJIT_ABI_H
#define TRACEJIT_ABI_H

#include <cstdint>
#include <ctime>

// What a generated `tj_run(in, out, consts, arena, ctx)` receives: the BLAS gemm functions
// (cblas_sgemm/cblas_dgemm or null), the callback that runs a step through NumPy, and, while
// `tj.profile` records, room for each top-level step's start and duration (nanoseconds on
// `tj_now_ns`'s clock; null otherwise).
struct TjContext {
  void* sgemm;
  void* dgemm;
  int (*fallback)(void* self, int64_t step, void* const* ptrs);
  void* self;
  int64_t* step_ns;  // 2 per step: start, duration
};

// CLOCK_MONOTONIC in nanoseconds: the clock of Python's time.perf_counter on Linux.
static inline int64_t tj_now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// What a generated library receives through `tj_set_pool`: the runtime's thread pool
// (cpp/pool.h), which runs fn(arg, b) for every block b in [0, nblocks).
struct TjPool {
  void (*run)(int64_t nblocks, void (*fn)(void* arg, int64_t block), void* arg);
  int64_t threads;  // including the caller
};

#endif  // TRACEJIT_ABI_H
