"""Native C++ for the schedule's `Fallback` steps that the CPU backend can compile.

The schedule keeps these primitives as `Fallback` steps (the CUDA backend has its own loops,
backend_cuda/gather.py, over the same element helpers, ir/cwriter/library.py); the CPU codegen asks `is_native` (ir/gather_plan.py, shared by both
backends) and, when it says yes, emits a call to one of
the templates in `GATHER_C` instead of the NumPy callback. Every template reproduces its NumPy
reference in tracejit/ir/structural.py (or tracejit/random.py) bit for bit:

- take / take_along_axis: indices wrap once when negative, then clamp to [0, n-1].
- take_add / take_along_add: copy x, then add the updates in index order, as `np.add.at` does,
  so float sums round identically; threads split only independent slices (never an index run).
- cumsum / cumprod: one scan template over the combine (`tj_wrap_add` / `tj_wrap_mul`),
  sequential along the axis (`np.add.accumulate`'s / `np.multiply.accumulate`'s order, so
  every rounding, overflow, inf and NaN is NumPy's), vectorized across the independent
  columns after the axis, threads over the rows before it.
- threefry2x32: the 20-round cipher on uint32_t words (wrapping, as NumPy's uint32).

Integers add and multiply through their unsigned type (wrapping, like NumPy; signed overflow
is undefined in C++), bools through `||` / `&&` (NumPy's bool add / multiply).

A gather from an empty axis with a non-empty index raises IndexError in NumPy; compiled code
cannot raise on data, so those steps (shapes are static) stay NumPy callbacks.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> b = {0: K.Buffer(0, (4, 3), np.dtype(np.float32), "input"),
...      1: K.Buffer(1, (2,), np.dtype(np.int64), "input"),
...      2: K.Buffer(2, (2, 3), np.dtype(np.float32), "output")}
>>> step = K.Fallback("k0", "take", {"axis": 0}, [0, 1], [2])
>>> is_native(step, b), native_call(step, b)
(True, 'tj_take<float, int64_t>(b0, b1, b2, 1LL, 4LL, 3LL, 2LL);')
"""

from __future__ import annotations

from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type
from tracejit.ir.cwriter.library import LIBRARY, SCAN_COMBINE
from tracejit.ir.gather_plan import gather_sizes, is_native
from tracejit.ir.primitives import RuleTable

GATHER_C = (
    LIBRARY
    + r"""
// Columns after the axis are split into chunks of this many so that a gather/scatter with
// few rows before the axis still spreads across threads.
#define TJ_COL_CHUNK 1024LL
// Rows scanned together along the last axis: enough independent add chains to hide the
// ~4-cycle add latency that a single sequential chain pays on every element.
#define TJ_SCAN_ROWS 8LL

static inline int64_t tj_chunks(int64_t post) {
  return post > 0 ? (post + TJ_COL_CHUNK - 1) / TJ_COL_CHUNK : 0;
}

// x: (pre, n, post), idx: m indices, out: (pre, m, post).
template <class T, class I>
static void tj_take(const T* x, const I* idx, T* out, int64_t pre, int64_t n, int64_t post,
                    int64_t m) {
  tj_parallel(pre * m, pre * m * post, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t p = r / m, j = r % m;
      const T* src = x + (p * n + tj_clamp_index(idx[j], n)) * post;
      T* dst = out + r * post;
      for (int64_t q = 0; q < post; ++q) dst[q] = src[q];
    }
  });
}

// x: (pre, n, post), idx and out: (pre, m, post).
template <class T, class I>
static void tj_take_along(const T* x, const I* idx, T* out, int64_t pre, int64_t n, int64_t post,
                          int64_t m) {
  tj_parallel(pre * m, pre * m * post, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t p = r / m;
      const I* ir = idx + r * post;
      T* dst = out + r * post;
      for (int64_t q = 0; q < post; ++q) dst[q] = x[(p * n + tj_clamp_index(ir[q], n)) * post + q];
    }
  });
}

template <class T>
static void tj_copy_into(const T* x, T* out, int64_t size) {
  if (x == out) return;
  tj_parallel(size, size, [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) out[e] = x[e];
  });
}

// out = x; then out[p, clamp(idx[j]), q] += upd[p, j, q] for j in order. Threads take
// (row p, column chunk) units: each output element is touched by one thread, in index order.
template <class T, class I>
static void tj_take_add(const T* x, const I* idx, const T* upd, T* out, int64_t pre, int64_t n,
                        int64_t post, int64_t m, bool along) {
  tj_copy_into(x, out, pre * n * post);
  const int64_t chunks = tj_chunks(post);
  tj_parallel(pre * chunks, pre * m * post, [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t p = u / chunks, c = u % chunks;
      const int64_t q0 = c * TJ_COL_CHUNK;
      const int64_t q1 = q0 + TJ_COL_CHUNK < post ? q0 + TJ_COL_CHUNK : post;
      T* row = out + p * n * post;
      for (int64_t j = 0; j < m; ++j) {
        const T* u_row = upd + (p * m + j) * post;
        if (along) {
          const I* i_row = idx + (p * m + j) * post;
          for (int64_t q = q0; q < q1; ++q) {
            T* d = row + tj_clamp_index(i_row[q], n) * post + q;
            *d = tj_wrap_add(*d, u_row[q]);
          }
        } else {
          T* d = row + tj_clamp_index(idx[j], n) * post;
          for (int64_t q = q0; q < q1; ++q) d[q] = tj_wrap_add(d[q], u_row[q]);
        }
      }
    }
  });
}

// x, out: (pre, n, post); out[p, 0, q] = x[p, 0, q] (a copy, not combined with an identity:
// a complex inf times 1 + 0j has a NaN part), then out[p, k, q] = f(out[p, k-1, q], x[p, k, q])
// in NumPy's (accumulate's) order; f is the scan's combine (ir/cwriter/library.py SCAN_COMBINE).
template <class T, class F>
static void tj_scan(const T* x, T* out, int64_t pre, int64_t n, int64_t post, F f) {
  if (n == 0) return;
  if (post == 1) {  // a scan along the last axis: TJ_SCAN_ROWS independent chains at once
    tj_parallel((pre + TJ_SCAN_ROWS - 1) / TJ_SCAN_ROWS, pre * n, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t p0 = b * TJ_SCAN_ROWS;
        const int64_t rows = pre - p0 < TJ_SCAN_ROWS ? pre - p0 : TJ_SCAN_ROWS;
        T acc[TJ_SCAN_ROWS];
        for (int64_t r = 0; r < rows; ++r) acc[r] = out[(p0 + r) * n] = x[(p0 + r) * n];
        for (int64_t k = 1; k < n; ++k) {
          for (int64_t r = 0; r < rows; ++r) {
            acc[r] = f(acc[r], x[(p0 + r) * n + k]);
            out[(p0 + r) * n + k] = acc[r];
          }
        }
      }
    });
    return;
  }
  const int64_t chunks = tj_chunks(post);
  tj_parallel(pre * chunks, pre * n * post, [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t p = u / chunks, c = u % chunks;
      const int64_t q0 = c * TJ_COL_CHUNK;
      const int64_t q1 = q0 + TJ_COL_CHUNK < post ? q0 + TJ_COL_CHUNK : post;
      const T* xs = x + p * n * post;
      T* os = out + p * n * post;
      for (int64_t q = q0; q < q1; ++q) os[q] = xs[q];
      for (int64_t k = 1; k < n; ++k) {
        const T* prev = os + (k - 1) * post;
        T* cur = os + k * post;
        const T* in = xs + k * post;
#pragma omp simd
        for (int64_t q = q0; q < q1; ++q) cur[q] = f(prev[q], in[q]);
      }
    }
  });
}

template <class K, class C>
static void tj_threefry(const K* key, const C* counts, int64_t* out, int64_t n) {
  const int64_t half = (n + 1) / 2;
  tj_parallel(half, half * 64, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) tj_threefry_pair(key, counts, out, i, n);
  });
}
"""
)


def native_call(step: K.Fallback, buffers: dict[int, K.Buffer]) -> str:
    """The C++ statement running `step` (when `is_native`)."""
    ins = [buffers[b] for b in step.inputs]
    out = buffers[step.outputs[0]]
    args = ", ".join(f"b{b}" for b in step.inputs + step.outputs)
    if step.prim == "threefry2x32":
        types = f"{c_type(ins[0].dtype)}, {c_type(ins[1].dtype)}"
        return f"tj_threefry<{types}>({args}, {out.size}LL);"
    pre, n, post, m = gather_sizes(step, buffers)
    t = c_type(ins[0].dtype)
    if step.prim in SCAN_COMBINE:
        f = f"[](const {t} a, const {t} b) {{ return {SCAN_COMBINE[step.prim]}(a, b); }}"
        return f"tj_scan<{t}>({args}, {pre}LL, {n}LL, {post}LL, {f});"
    types = f"{t}, {c_type(ins[1].dtype)}"
    along = step.prim.startswith("take_along")
    sizes = f"{pre}LL, {n}LL, {post}LL, {m}LL"
    if step.prim == "take":
        return f"tj_take<{types}>({args}, {sizes});"
    if step.prim == "take_along_axis":
        return f"tj_take_along<{types}>({args}, {sizes});"
    return f"tj_take_add<{types}>({args}, {sizes}, {str(along).lower()});"


# The kernel of each primitive of fusion class KERNEL, keyed by the primitive:
# rule(step, buffers, name) -> (statement, helper): the C++ statement running the step, after
# `helper` (functions it calls, their names starting with `name`, unique in the unit; "" for
# the templates of GATHER_C, which the unit includes whenever a native step is present).
CPU_KERNELS = RuleTable("C++ kernel")


@CPU_KERNELS.register("take", "take_along_axis", "take_add", "take_along_add")
@CPU_KERNELS.register("cumsum", "cumprod", "threefry2x32")
def _templated(step: K.Fallback, buffers: dict[int, K.Buffer], name: str) -> tuple[str, str]:
    return native_call(step, buffers), ""


__all__ = ["CPU_KERNELS", "GATHER_C", "is_native", "native_call"]
