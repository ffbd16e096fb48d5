// The ABI between the runtime (this directory) and the C++ that tracejit generates
// (tracejit/backend_cpu/codegen.py), written once: the executor includes this file, and the
// code generator copies its text into every translation unit it writes (so a generated
// unit stays self-contained: its text is its cache key, and a failed one can be rebuilt
// from the copy kept beside the error). Plain C structs with include guards, no namespace.
#ifndef TRACEJIT_ABI_H
#define TRACEJIT_ABI_H

#include <cstdint>
#include <ctime>

// The collectives of tracejit.lax.parallel in generated code (backend_cpu/collectives.py):
// the non-blocking MPI functions of the libmpi that mpi4py loaded and the handles they take,
// filled by tracejit/distributed/native.py (which mirrors this layout: every field 8 bytes).
// Handles travel as intptr_t (MPICH's int handles and Open MPI's pointers both fit a register
// argument); a request is stored in an int64_t. A collective that fails writes `failed` (its
// kind + 1), `why` (1: timeout, 2: MPI error, 3: process count) and `count` for the message.
struct TjMpi {
  void* iallreduce;  // MPI_Iallreduce
  void* iallgather;  // MPI_Iallgather
  void* ireduce_scatter_block;  // MPI_Ireduce_scatter_block
  void* isend;  // MPI_Isend
  void* irecv;  // MPI_Irecv
  void* test;  // MPI_Test
  intptr_t comm, in_place;  // MPI_COMM_WORLD, MPI_IN_PLACE
  intptr_t ops[3];  // MPI_SUM, MPI_MAX, MPI_MIN
  intptr_t types[16];  // by tracejit/distributed/native.py's TYPES (MPI_BYTE last)
  int64_t rank, size, timeout_ns;
  int64_t failed, why, count;
};

// What a generated `tj_run(in, out, consts, arena, ctx)` receives: the BLAS gemm functions
// (cblas_sgemm/cblas_dgemm or null), the callback that runs a step through NumPy, and, while
// `tj.profile` records, room for each top-level step's start and duration (nanoseconds on
// `tj_now_ns`'s clock; null otherwise); the MPI collectives (null without them).
struct TjContext {
  void* sgemm;
  void* dgemm;
  int (*fallback)(void* self, int64_t step, void* const* ptrs);
  void* self;
  int64_t* step_ns;  // 2 per step: start, duration
  TjMpi* mpi;
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
