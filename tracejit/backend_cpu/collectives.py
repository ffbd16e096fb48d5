"""Native C++ for the collectives of tracejit.lax.parallel: MPI called from `tj_run`.

A `psum`/`pmax`/`pmin`/`all_gather`/`psum_scatter`/`ppermute`/`axis_index` step is a call
to one of the helpers in `COLLECTIVES_C`, which call the MPI functions in `ctx->mpi`
(cpp/abi.h's TjMpi, filled by tracejit/distributed/native.py) with the GIL released: no
Python callback. Each starts the non-blocking MPI collective and tests it until done, up to
the timeout (TRACEJIT_DISTRIBUTED_TIMEOUT: MPI has none of its own); a failure is recorded
in the TjMpi and returned as TJ_MPI_FAILED, which the executable turns into DistributedError.
Over one process every collective is a copy (no MPI needed). The reductions run on the
dtypes MPI has (float32/64 and 8..64-bit integers); others stay NumPy callbacks.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> b = {0: K.Buffer(0, (3,), np.dtype(np.float32), "input"),
...      1: K.Buffer(1, (3,), np.dtype(np.float32), "output")}
>>> step = K.Fallback("k0", "psum", {"axis_name": "i", "count": 2}, [0], [1])
>>> is_collective(step, b), statement(step, b)
(True, 'if (int rc = tj_allreduce(ctx->mpi, 0, 0, 1, b0, b1, 3LL, 12LL, 2LL)) return rc;')
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from tracejit.distributed.native import KINDS, TYPES, helper_threads_allowed

if TYPE_CHECKING:  # imported where used: a warm cache hit needs no kernel classes (~4 ms)
    from tracejit.ir import kernel as K

USE = "tj_collectives"  # the name in codegen's `uses` set that includes COLLECTIVES_C
_DTYPES = {np.dtype(name): i for i, (name, _) in enumerate(TYPES) if name}
_REDUCE_OPS = {"psum": 0, "pmax": 1, "pmin": 2}


def is_collective(step: K.Step, buffers: dict[int, K.Buffer]) -> bool:
    """Whether `step` is a collective compiled to MPI calls (not a NumPy callback)."""
    from tracejit.ir import kernel as K

    if not isinstance(step, K.Fallback) or step.prim not in KINDS:
        return False
    if step.prim in _REDUCE_OPS or step.prim == "psum_scatter":
        return buffers[step.inputs[0]].dtype in _DTYPES
    return True


def statement(step: K.Fallback, buffers: dict[int, K.Buffer]) -> str:
    """The C++ statement running collective `step` over buffers `b<id>`."""
    kind, count = KINDS.index(step.prim), step.attrs["count"]
    (out,) = step.outputs
    if step.prim == "axis_index":
        return f"if (int rc = tj_axis_index(ctx->mpi, {count}LL, b{out})) return rc;"
    x = step.inputs[0]
    xb = buffers[x]
    if step.prim in _REDUCE_OPS:
        op, dt = _REDUCE_OPS[step.prim], _DTYPES[xb.dtype]
        args = f"ctx->mpi, {kind}, {op}, {dt}, b{x}, b{out}, {xb.size}LL, {xb.nbytes}LL"
        args += f", {count}LL"
        return f"if (int rc = tj_allreduce({args})) return rc;"
    if step.prim == "psum_scatter":
        ob = buffers[out]
        args = f"ctx->mpi, {_DTYPES[xb.dtype]}, b{x}, b{out}, {ob.size}LL, {ob.nbytes}LL"
        args += f", {count}LL"
        return f"if (int rc = tj_reduce_scatter({args})) return rc;"
    if step.prim == "all_gather":
        return f"if (int rc = tj_allgather(ctx->mpi, b{x}, b{out}, {xb.nbytes}LL, {count}LL)) return rc;"
    pairs = step.attrs["perm"] or ((-1, -1),)
    src = ", ".join(str(s) for s, _ in pairs)
    dst = ", ".join(str(d) for _, d in pairs)
    table = f"static const int64_t src[] = {{{src}}}, dst[] = {{{dst}}};"
    call = (
        f"tj_ppermute(ctx->mpi, b{x}, b{out}, {xb.nbytes}LL, src, dst, {len(pairs)}LL, {count}LL)"
    )
    return f"{{\n  {table}\n  if (int rc = {call}) return rc;\n}}"


MAX_PENDING = 64  # all-reduces one tj_run keeps in flight (COLLECTIVES_C's tj_pending)


def overlap_enabled() -> bool:
    """Whether all-reduces run while later steps compute (TRACEJIT_DISTRIBUTED_OVERLAP=0:
    each one blocks where it stands in the schedule; so too where MPI was initialized
    without MPI_THREAD_MULTIPLE, which the helper threads need)."""
    return os.environ.get("TRACEJIT_DISTRIBUTED_OVERLAP", "1") != "0" and helper_threads_allowed()


def _touched(step: K.Step) -> set[int]:
    """The buffers a step reads or writes (a View only aliases: it touches nothing)."""
    from tracejit.ir import kernel as K

    if isinstance(step, K.Kernel):
        return {ld.buf for ld in step.loads()} | {st.buf for st in step.stores}
    if isinstance(step, K.Matmul):
        return {step.a, step.b, step.out}
    if isinstance(step, K.Fallback):
        return {*step.inputs, *step.outputs}
    return set()


class Overlap:
    """The all-reduces of one `tj_run` that run while the following steps compute.

    `start` begins an all-reduce (MPI_Iallreduce in place on its output, tested to
    completion by a helper thread: MPICH progresses a request only inside MPI calls); the
    statement `finish` returns waits for it, and goes right before the first step that reads
    or writes its output (through any view), or at the end of `tj_run`. Its operand is
    copied into the output first, so only the output (live until its readers, in the memory
    plan) must stay untouched while it runs."""

    def __init__(self, buffers: dict[int, K.Buffer]):
        self.buffers = buffers
        self.pending: dict[int, int] = {}  # root buffer of an output in flight -> its slot
        self.slots = 0

    def _root(self, b: int) -> int:
        while self.buffers[b].kind in ("view", "shifted") and self.buffers[b].base is not None:
            b = self.buffers[b].base
        return b

    def can_start(self, step: K.Step) -> bool:
        return (
            is_collective(step, self.buffers)
            and step.prim in _REDUCE_OPS
            and step.attrs["count"] > 1
            and self.slots < MAX_PENDING
        )

    def start(self, step: K.Fallback) -> str:
        slot, (x,), (out,) = self.slots, step.inputs, step.outputs
        self.slots += 1
        self.pending[self._root(out)] = slot
        xb = self.buffers[x]
        kind, op, dt = KINDS.index(step.prim), _REDUCE_OPS[step.prim], _DTYPES[xb.dtype]
        args = f"ctx->mpi, {slot}, {kind}, {op}, {dt}, b{x}, b{out}, {xb.size}LL, {xb.nbytes}LL"
        return f"if (int rc = tj_allreduce_start({args}, {step.attrs['count']}LL)) return rc;"

    def finishes(self, step: K.Step | None) -> list[tuple[int, str]]:
        """(slot, statement) for each all-reduce that must end before `step` (None: all)."""
        roots = None if step is None else {self._root(b) for b in _touched(step)}
        done = [r for r in self.pending if roots is None or r in roots]
        slots = [self.pending.pop(r) for r in done]
        return [(s, f"if (int rc = tj_allreduce_finish({s})) return rc;") for s in slots]


COLLECTIVES_C = r"""
// tj_collectives: MPI called from generated code (backend_cpu/collectives.py)
#include <atomic>
#include <sched.h>

#include <cstdlib>
#include <thread>
#include <time.h>

typedef int (*tj_mpi_reduce_t)(const void*, void*, int, intptr_t, intptr_t, intptr_t, int64_t*);
typedef int (*tj_mpi_gather_t)(const void*, int, intptr_t, void*, int, intptr_t, intptr_t,
                               int64_t*);
typedef int (*tj_mpi_p2p_t)(const void*, int, intptr_t, int, int, intptr_t, int64_t*);
typedef int (*tj_mpi_test_t)(int64_t*, int*, void*);

#define TJ_MPI_FAILED 2001
#define TJ_MPI_TAG 7
// kinds (tracejit/distributed/native.py KINDS): psum pmax pmin all_gather psum_scatter ppermute
// axis_index; why: 1 timeout, 2 MPI error (or a message over 2**31-1), 3 count, 4 an MPI function missing
static int tj_mpi_fail(TjMpi* m, int kind, int why, int64_t count) {
  m->failed = kind + 1;
  m->why = why;
  m->count = count;
  return TJ_MPI_FAILED;
}

// 0 when `count` processes run (the count the collective was traced for) and, over several,
// MPI's functions are there; the copy over one process needs none.
static int tj_mpi_check(TjMpi* m, int kind, int64_t count, int64_t n) {
  if (m->size != count) return tj_mpi_fail(m, kind, 3, count);
  if (count > 1 && !m->test) return tj_mpi_fail(m, kind, 4, count);
  if (n > 0x7fffffff) return tj_mpi_fail(m, kind, 2, count);
  return 0;
}

// Test each request until done: back to back for 20 ms (MPI progresses only inside MPI
// calls; yielding the core between tests), then every ~0.2 ms, failing after m->timeout_ns. With `relaxed` (a helper thread
// next to the computing ones) it tests every ~20 us until `*relaxed` says someone waits.
static int tj_mpi_wait(TjMpi* m, int kind, int64_t* reqs, int64_t n,
                       const std::atomic<int>* relaxed = nullptr) {
  const int64_t start = tj_now_ns();
  int64_t status[32];
  for (int64_t i = 0; i < n; ++i) {
    for (int done = 0; !done;) {
      if (((tj_mpi_test_t)m->test)(&reqs[i], &done, status)) return tj_mpi_fail(m, kind, 2, 0);
      if (done) break;
      const int64_t waited = tj_now_ns() - start;
      if (waited > m->timeout_ns) return tj_mpi_fail(m, kind, 1, 0);
      const bool gentle = relaxed && relaxed->load(std::memory_order_relaxed);
      if (gentle || waited > 20000000) {
        timespec pause{0, gentle ? 20000 : 200000};
        nanosleep(&pause, nullptr);
      } else {
        sched_yield();  // a peer waiting for a core (more processes than cores) gets it
      }
    }
  }
  return 0;
}

// `x` itself, or a private copy when it overlaps `out` (MPI's buffers must not alias).
static const void* tj_mpi_source(const void* x, int64_t xbytes, void* out, int64_t obytes,
                                 void** scratch) {
  const char *a = (const char*)x, *o = (const char*)out;
  if (a + xbytes <= o || o + obytes <= a || xbytes == 0) return x;
  *scratch = std::malloc(xbytes);
  if (*scratch) __builtin_memcpy(*scratch, x, xbytes);
  return *scratch;
}

static int tj_allreduce(TjMpi* m, int kind, int op, int type, const void* x, void* out, int64_t n,
                        int64_t bytes, int64_t count) {
  if (int rc = tj_mpi_check(m, kind, count, n)) return rc;
  if (count == 1) {
    if (out != x) __builtin_memmove(out, x, bytes);
    return 0;
  }
  void* scratch = nullptr;
  const void* src = x == out ? (const void*)m->in_place : tj_mpi_source(x, bytes, out, bytes, &scratch);
  int64_t req = 0;
  int rc = ((tj_mpi_reduce_t)m->iallreduce)(src, out, (int)n, m->types[type], m->ops[op],
                                              m->comm, &req);
  rc = rc ? tj_mpi_fail(m, kind, 2, count) : tj_mpi_wait(m, kind, &req, 1);
  std::free(scratch);
  return rc;
}

// x: (count, n) elements summed over the processes; this process keeps row `rank` in out.
static int tj_reduce_scatter(TjMpi* m, int type, const void* x, void* out, int64_t n,
                             int64_t bytes, int64_t count) {
  if (int rc = tj_mpi_check(m, 4, count, n)) return rc;
  if (count == 1) {
    if (out != x) __builtin_memmove(out, x, bytes);
    return 0;
  }
  void* scratch = nullptr;
  const void* src = tj_mpi_source(x, bytes * count, out, bytes, &scratch);
  int64_t req = 0;
  int rc = ((tj_mpi_reduce_t)m->ireduce_scatter_block)(src, out, (int)n, m->types[type],
                                                         m->ops[0], m->comm, &req);
  rc = rc ? tj_mpi_fail(m, 4, 2, count) : tj_mpi_wait(m, 4, &req, 1);
  std::free(scratch);
  return rc;
}

// out: every process's `bytes` bytes of x, in process order.
static int tj_allgather(TjMpi* m, const void* x, void* out, int64_t bytes, int64_t count) {
  if (int rc = tj_mpi_check(m, 3, count, bytes)) return rc;
  if (count == 1) {
    if (out != x) __builtin_memmove(out, x, bytes);
    return 0;
  }
  const intptr_t byte = m->types[10];
  void* scratch = nullptr;
  const void* src = tj_mpi_source(x, bytes, out, bytes * count, &scratch);
  int64_t req = 0;
  int rc = ((tj_mpi_gather_t)m->iallgather)(src, (int)bytes, byte, out, (int)bytes, byte,
                                              m->comm, &req);
  rc = rc ? tj_mpi_fail(m, 3, 2, count) : tj_mpi_wait(m, 3, &req, 1);
  std::free(scratch);
  return rc;
}

// Process src[i] sends x to dst[i]; a process that receives nothing gets zeros.
static int tj_ppermute(TjMpi* m, const void* x, void* out, int64_t bytes, const int64_t* src,
                       const int64_t* dst, int64_t pairs, int64_t count) {
  if (int rc = tj_mpi_check(m, 5, count, bytes)) return rc;
  void* scratch = nullptr;
  const void* from = tj_mpi_source(x, bytes, out, bytes, &scratch);
  int64_t reqs[2] = {0, 0}, n = 0;
  bool received = false;
  int rc = 0;
  for (int64_t i = 0; i < pairs && !rc; ++i) {
    if (count == 1) {
      if (src[i] == 0 && dst[i] == 0) __builtin_memmove(out, from, bytes);
      received |= src[i] == 0 && dst[i] == 0;
      continue;
    }
    if (src[i] == m->rank) {
      rc = ((tj_mpi_p2p_t)m->isend)(from, (int)bytes, m->types[10], (int)dst[i], TJ_MPI_TAG,
                                    m->comm, &reqs[n++]);
    }
    if (!rc && dst[i] == m->rank) {
      received = true;
      rc = ((tj_mpi_p2p_t)m->irecv)(out, (int)bytes, m->types[10], (int)src[i], TJ_MPI_TAG,
                                    m->comm, &reqs[n++]);
    }
  }
  rc = rc ? tj_mpi_fail(m, 5, 2, count) : count == 1 ? 0 : tj_mpi_wait(m, 5, reqs, n);
  if (!rc && !received) __builtin_memset(out, 0, bytes);
  std::free(scratch);
  return rc;
}

// An all-reduce in flight (Overlap): in place on `out`, tested by a helper thread.
struct TjPending {
  std::thread thread;
  int64_t req;
  int rc;
  std::atomic<int> relaxed;
};
static TjPending tj_pending[64];

static int tj_allreduce_start(TjMpi* m, int slot, int kind, int op, int type, const void* x,
                              void* out, int64_t n, int64_t bytes, int64_t count) {
  TjPending& p = tj_pending[slot];
  if (p.thread.joinable()) p.thread.join();  // left by a call that failed before its finish
  if (int rc = tj_mpi_check(m, kind, count, n)) return rc;
  if (out != x) __builtin_memmove(out, x, bytes);
  p.req = 0;
  p.rc = 0;
  p.relaxed.store(1);
  if (((tj_mpi_reduce_t)m->iallreduce)((const void*)m->in_place, out, (int)n, m->types[type],
                                       m->ops[op], m->comm, &p.req)) {
    return tj_mpi_fail(m, kind, 2, count);
  }
  p.thread = std::thread([m, kind, &p] { p.rc = tj_mpi_wait(m, kind, &p.req, 1, &p.relaxed); });
  return 0;
}

static int tj_allreduce_finish(int slot) {
  TjPending& p = tj_pending[slot];
  p.relaxed.store(0);  // someone waits: test back to back
  if (p.thread.joinable()) p.thread.join();
  return p.rc;
}

static int tj_axis_index(TjMpi* m, int64_t count, int32_t* out) {
  if (m->size != count) return tj_mpi_fail(m, 6, 3, count);
  *out = (int32_t)m->rank;
  return 0;
}
"""
