"""C++ code generation: one translation unit per `Schedule`.

The unit exports `tj_run(inputs, outputs, consts, arena, ctx)`, which runs every step in
order through a table of step functions (steps.py: a repeated step is one function and one
more table row, so the compile time of an unrolled loop grows with its distinct steps). Each
kernel is a function over a range of outer units (rows, or elements of a 1-D loop);
`tj_parallel` runs it in blocks on the runtime's thread pool (cpp/pool.h, handed to the
library through `tj_set_pool`) when the loop nest is big enough. Innermost loops carry
`omp simd` (-fopenmp-simd: no OpenMP runtime), and libm functions are declared
`omp declare simd`, so GCC calls glibc's libmvec vector variants without -ffast-math (NaN/Inf
semantics stay intact).

Each kernel gets a writer by shape (`writer_for`): elementwise loops and row reductions
(rows.py), column reductions and full reductions split into per-thread partials
(columns.py). Matmuls call single-threaded BLAS per slab of the output from our own threads.

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> from tracejit.ir.memory import plan_memory
>>> s = plan_memory(fuse(tj.make_ir(lambda x: x + 1.0)(np.ones(3, np.float32))))
>>> "tj_run" in generate(s)
True
"""

from __future__ import annotations

import numpy as np

from tracejit import timing
from tracejit.backend_cpu import abi, collectives, vector_math
from tracejit.backend_cpu.columns import ColumnWriter, PartialWriter, is_column, is_partial
from tracejit.backend_cpu.emit import CPP, INLINE_F32_C, BaseWriter
from tracejit.backend_cpu.gather import CPU_KERNELS, GATHER_C, is_native
from tracejit.backend_cpu.rows import LoopWriter, RowWriter
from tracejit.backend_cpu.steps import StepTable
from tracejit.ir import kernel as K
from tracejit.ir.c_render import PRELUDE, c_type

# Below this many element-iterations a kernel runs on the calling thread: an OpenMP fork/join
# costs a few microseconds, about what 32K simple element operations take on one core.
PARALLEL_MIN_WORK = 1 << 15
# Work blocks per parallel loop, handed out dynamically (a few per thread balances load).
PARALLEL_BLOCKS = 32
# A matmul splits across threads above this many multiply-adds (~0.1 ms of one core), in
# slabs of C whose row/column counts are multiples of GEMM_SLAB (BLAS micro-kernel tiles).
GEMM_SPLIT_MIN = 1 << 20
GEMM_SLAB = 16

HEADER = f"""
#include <cstdint>
{CPP.tj_fn()}
"""

RUNTIME = r"""
typedef void (*tj_sgemm_t)(int, int, int, int, int, int, float, const float*, int, const float*,
                           int, float, float*, int);
typedef void (*tj_dgemm_t)(int, int, int, int, int, int, double, const double*, int,
                           const double*, int, double, double*, int);

// s + c += x with Neumaier's correction (rows.py: the totals of float64 sums).
static inline void tj_neumaier(long double& s, long double& c, long double x) {
  const long double t = s + x;
  c += (__builtin_fabsl(s) >= __builtin_fabsl(x)) ? (s - t) + x : (x - t) + s;
  s = t;
}

// Parallel loops run on the runtime's thread pool (cpp/pool.h), which the runtime hands to
// the library through tj_set_pool: the caller takes blocks too and never waits for a worker
// that has not started one, and idle workers sleep (no spinning against other processes).
// Without a pool every block runs on the calling thread, in the same blocks (same results).
static const TjPool* tj_pool = nullptr;
extern "C" __attribute__((visibility("default"))) void tj_set_pool(const void* pool) {
  tj_pool = (const TjPool*)pool;
}

// fn(b) for b in [0, nblocks): on the pool's threads, or here.
template <class F> static void tj_blocks(int64_t nblocks, const F& fn) {
  if (tj_pool && tj_pool->threads > 1 && nblocks > 1) {
    tj_pool->run(nblocks, [](void* f, int64_t b) { (*(const F*)f)(b); }, (void*)&fn);
  } else {
    for (int64_t b = 0; b < nblocks; ++b) fn(b);
  }
}

// Many more blocks than threads, handed out dynamically: on a shared machine a thread that
// gets less CPU takes fewer blocks.
template <class F> static void tj_parallel(int64_t units, int64_t work, const F& fn) {
  if (units > 1 && work >= TJ_PARALLEL_MIN_WORK) {
    const int64_t nblocks = units < TJ_PARALLEL_BLOCKS ? units : TJ_PARALLEL_BLOCKS;
    tj_blocks(nblocks, [&](int64_t b) {
      int64_t lo = units * b / nblocks, hi = units * (b + 1) / nblocks;
      if (lo < hi) fn(lo, hi);
    });
  } else if (units > 0) {
    fn(0, units);
  }
}

// The same split for a reduction into per-block partial results: fn(block, lo, hi). Returns
// the number of blocks (each block's partials are combined in order by the caller; the
// blocks depend only on the sizes, so results do not depend on the thread count).
template <class F> static int64_t tj_parallel_parts(int64_t units, int64_t work, const F& fn) {
  if (units > 1 && work >= TJ_PARALLEL_MIN_WORK) {
    const int64_t nblocks = units < TJ_PARALLEL_BLOCKS ? units : TJ_PARALLEL_BLOCKS;
    tj_blocks(nblocks, [&](int64_t b) { fn(b, units * b / nblocks, units * (b + 1) / nblocks); });
    return nblocks;
  }
  fn(0, 0, units);
  return 1;
}

template <class T>
static void tj_gemm_loops(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
                          const T* b, T* c) {
  tj_parallel(m, m * n * k, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T* row = c + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        T av = ta ? a[p * m + i] : a[i * k + p];
        if (tb) {
          for (int64_t j = 0; j < n; ++j) row[j] += av * b[j * k + p];
        } else {
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) row[j] += av * b[p * n + j];
        }
      }
    }
  });
}

static bool tj_blas_ok(int64_t m, int64_t n, int64_t k) {
  const int64_t lim = 0x7fffffff;
  return m > 0 && n > 0 && k > 0 && m < lim && n < lim && k < lim;
}

// One BLAS call on a sub-block of C (row-major; lda/ldb/ldc in elements).
template <class T>
static void tj_gemm_blas(const TjContext* ctx, int blas, bool ta, bool tb, int64_t m, int64_t n,
                         int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                         int64_t ldc) {
  int oa = ta ? 112 : 111, ob = tb ? 112 : 111;  // CblasTrans : CblasNoTrans
  if (blas == 1) {
    ((tj_sgemm_t)ctx->sgemm)(101, oa, ob, (int)m, (int)n, (int)k, 1.0f, (const float*)a, (int)lda,
                             (const float*)b, (int)ldb, 0.0f, (float*)c, (int)ldc);
  } else {
    ((tj_dgemm_t)ctx->dgemm)(101, oa, ob, (int)m, (int)n, (int)k, 1.0, (const double*)a,
                             (int)lda, (const double*)b, (int)ldb, 0.0, (double*)c, (int)ldc);
  }
}

// BLAS runs single-threaded (blas.py sets it so): the pool's threads each multiply one slab of
// C, rows when m >= n, else columns. One thread pool for kernels and matmul: a second pool
// (OpenBLAS's) spinning next to libgomp's on the same cores slowed a 2-thread MLP step 5x.
template <class T>
static void tj_gemm_split(const TjContext* ctx, int blas, bool ta, bool tb, int64_t m, int64_t n,
                          int64_t k, const T* a, const T* b, T* c) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  const bool rows = m >= n;
  const int64_t len = rows ? m : n;
  int64_t parts = tj_pool ? tj_pool->threads : 1;
  if (parts > len / TJ_GEMM_SLAB) parts = len / TJ_GEMM_SLAB;
  if (parts < 2 || m * n * k < TJ_GEMM_SPLIT_MIN) {
    tj_gemm_blas<T>(ctx, blas, ta, tb, m, n, k, a, lda, b, ldb, c, n);
    return;
  }
  tj_blocks(parts, [&](int64_t p) {
    const int64_t lo = len * p / parts / TJ_GEMM_SLAB * TJ_GEMM_SLAB;
    const int64_t hi = p + 1 == parts ? len : len * (p + 1) / parts / TJ_GEMM_SLAB * TJ_GEMM_SLAB;
    if (rows) {
      const T* ap = ta ? a + lo : a + lo * k;
      tj_gemm_blas<T>(ctx, blas, ta, tb, hi - lo, n, k, ap, lda, b, ldb, c + lo * n, n);
    } else {
      const T* bp = tb ? b + lo * k : b + lo;
      tj_gemm_blas<T>(ctx, blas, ta, tb, m, hi - lo, k, a, lda, bp, ldb, c + lo, n);
    }
  });
}

template <class T>
static void tj_matmul(const TjContext* ctx, int blas, bool ta, bool tb, int64_t batch, int64_t m,
                      int64_t n, int64_t k, const T* a, const T* b, T* c) {
  const bool have = (blas == 1 && ctx->sgemm) || (blas == 2 && ctx->dgemm);
  for (int64_t i = 0; i < batch; ++i) {
    const T* ai = a + i * m * k;
    const T* bi = b + i * k * n;
    T* ci = c + i * m * n;
    if (have && tj_blas_ok(m, n, k)) {
      tj_gemm_split<T>(ctx, blas, ta, tb, m, n, k, ai, bi, ci);
    } else {
      tj_gemm_loops<T>(ta, tb, m, n, k, ai, bi, ci);
    }
  }
}
"""


ABI = abi.ABI


def writer_for(kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set[str]) -> BaseWriter:
    """The code writer for one kernel: elementwise loop, row, column or split full reduction."""
    if not kernel.reductions:
        return LoopWriter(kernel, buffers, uses)
    if is_column(kernel):
        return ColumnWriter(kernel, buffers, uses)
    if is_partial(kernel):
        return PartialWriter(kernel, buffers, uses)
    return RowWriter(kernel, buffers, uses)


def _statement(i: int, step: K.Step, buffers, name: str) -> tuple[str, str]:
    """(the C++ statement running a non-kernel step over buffers `b<id>` and `ctx`, the
    helper functions it calls: names starting with `name`)."""
    if isinstance(step, K.Matmul):
        dt = buffers[step.out].dtype
        blas = {np.dtype(np.float32): 1, np.dtype(np.float64): 2}.get(dt, 0)
        flags = f"{blas}, {str(step.trans_a).lower()}, {str(step.trans_b).lower()}"
        sizes = f"{step.batch}LL, {step.m}LL, {step.n}LL, {step.k}LL"
        call = f"tj_matmul<{c_type(dt)}>(ctx, {flags}, {sizes}, b{step.a}, b{step.b}, b{step.out});"
        return call, ""
    if is_native(step, buffers):
        return CPU_KERNELS[step.prim](step, buffers, name)
    return callback_statement(i, step), ""


def callback_statement(callback: int, step: K.Fallback) -> str:
    """A call back into Python (NumPy) for `step`, under id `callback` (`_Fallbacks`)."""
    ptrs = ", ".join(f"(void*)b{b}" for b in step.inputs + step.outputs)
    return "\n".join(
        [
            "{",
            f"  void* ptrs[] = {{{ptrs}}};",
            f"  if (int rc = ctx->fallback(ctx->self, {callback}, ptrs)) return rc;",
            "}",
        ]
    )


SIGNATURE = (
    "(void* const* in, void* const* out, void* const* consts, char* arena, const TjContext* ctx)"
)


def run_function(
    schedule: K.Schedule, fn: str, uses: set[str], calls: dict | None = None, linkage: str = ""
) -> tuple[list[str], list[str]]:
    """(kernel functions, the function `fn` running every step) for `schedule`.

    `calls` replaces the code of some steps (step index -> C++ lines): the loops of
    backend_cpu/loops.py. `fn` has the `tj_run` signature.
    """
    buffers = {b.id: b for b in schedule.buffers}
    table = StepTable(buffers, fn)
    # all-reduces overlap the steps after them in tj_run (not inside a loop's body)
    overlap = None
    if fn == "tj_run" and collectives.overlap_enabled():
        overlap = collectives.Overlap(table.buffers)
    for i, step in enumerate(schedule.steps):
        label = getattr(step, "name", "")
        for slot, text in overlap.finishes(step) if overlap else ():
            table.add(text, f"{fn}_finish{slot}", label=f"finish all-reduce {slot}")
        if overlap and overlap.can_start(step):
            uses.add(collectives.USE)
            table.add(overlap.start(step), f"{fn}_s{i}", label=label)
        elif calls and i in calls:
            table.add("\n".join(calls[i]), f"{fn}_s{i}", label=label)
        elif isinstance(step, K.Kernel):
            w = writer_for(table.hoist(step), table.buffers, uses)
            table.add(w.call(), w.k.name, w.function())
        elif collectives.is_collective(step, buffers):  # MPI from C++, no callback
            uses.add(collectives.USE)
            table.add(collectives.statement(step, buffers), f"{fn}_s{i}", label=label)
        elif not isinstance(step, K.View):  # a view is only a pointer alias
            statement, helper = _statement(i, step, buffers, f"{fn}_s{i}")
            table.add(statement, f"{fn}_s{i}", helper, label)
    for slot, text in overlap.finishes(None) if overlap else ():
        table.add(text, f"{fn}_finish{slot}", label=f"finish all-reduce {slot}")
    return table.functions, table.run_function(f"{linkage}int {fn}{SIGNATURE}")


def uses_native_gather(schedule: K.Schedule) -> bool:
    buffers = {b.id: b for b in schedule.buffers}
    return any(isinstance(s, K.Fallback) and is_native(s, buffers) for s in schedule.steps)


def generate(schedule: K.Schedule, name: str = "function", loops=None) -> str:
    """The C++ translation unit for `schedule` (after `plan_memory`).

    `loops` (a backend_cpu.loops.LoopPlan, or None) adds the compiled region functions and
    the loop code of its steps.
    """
    with timing.phase("codegen"):
        return _generate(schedule, name, loops)


def _generate(schedule: K.Schedule, name: str, loops) -> str:
    uses: set[str] = set(loops.uses) if loops is not None else set()
    calls = loops.calls if loops is not None else None
    functions, run = run_function(schedule, "tj_run", uses, calls, 'extern "C" ')
    regions = loops.functions if loops is not None else []
    native = uses_native_gather(schedule) or (loops is not None and loops.native_gather)
    parts = [
        f"// tracejit: generated from {name}",
        HEADER,
        f"#define TJ_PARALLEL_MIN_WORK {PARALLEL_MIN_WORK}LL",
        f"#define TJ_PARALLEL_BLOCKS {PARALLEL_BLOCKS}LL",
        f"#define TJ_GEMM_SPLIT_MIN {GEMM_SPLIT_MIN}LL",
        f"#define TJ_GEMM_SLAB {GEMM_SLAB}LL",
        # a float16/bfloat16 exp/log/tanh (computed in float32: `expf`) calls the inline
        # float32 function where the unit defines it, not a second `tj_expf` from libmvec
        vector_math.declarations({u for u in uses if f"tj_{u}" not in uses}),
        PRELUDE,
        *(text for name, text in INLINE_F32_C.items() if name in uses),
        ABI,
        RUNTIME,
        GATHER_C if native else "",
        collectives.COLLECTIVES_C if collectives.USE in uses else "",
        *regions,
        *functions,
        *run,
        "",
    ]
    return "\n".join(parts)
