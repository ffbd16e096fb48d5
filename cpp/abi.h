// The ABI between the runtime (this directory) and the C++ that tracejit generates
// (tracejit/backend_cpu/codegen.py), written once: the executor includes this file, and the
// code generator copies its text into every translation unit it writes (so a generated
// unit stays self-contained: its text is its cache key, and a failed one can be rebuilt
// from the copy kept beside the error). Plain C structs with include guards, no namespace.
#ifndef TRACEJIT_ABI_H
#define TRACEJIT_ABI_H

#include <cstdint>

// What a generated `tj_run(in, out, consts, arena, ctx)` receives: the BLAS gemm functions
// (cblas_sgemm/cblas_dgemm or null) and the callback that runs a step through NumPy.
struct TjContext {
  void* sgemm;
  void* dgemm;
  int (*fallback)(void* self, int64_t step, void* const* ptrs);
  void* self;
};

// What a generated library receives through `tj_set_pool`: the runtime's thread pool
// (cpp/pool.h), which runs fn(arg, b) for every block b in [0, nblocks).
struct TjPool {
  void (*run)(int64_t nblocks, void (*fn)(void* arg, int64_t block), void* arg);
  int64_t threads;  // including the caller
};

#endif  // TRACEJIT_ABI_H
