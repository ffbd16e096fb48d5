"""Partial results combine across threads through the dialect (ir/cwriter/dialect.py
`Dialect.combine`): one `Partial` (ir/cwriter/reduce.py), the fields a thread hands over and
how another thread's fields merge in, written by the C++ dialect as a fold of the per-block
partials in block order and by the CUDA dialect as a warp-shuffle butterfly, then shared
memory. A kind described only by its `Partial` gets both forms; the expected C is written
out here by hand."""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu.emit import CPP
from tracejit.backend_cuda.codegen import CUDA
from tracejit.ir import kernel as K
from tracejit.ir.cwriter.reduce import Accumulator, Partial


def _add(a: str, b: str) -> str:
    return f"{a} + {b}"


# a kind the accumulator library does not have: a count and a sum, merged field by field
MEAN = Partial.fieldwise(
    7, [("int64_t", "a7n"), ("double", "a7s")], [_add, _add], ["const double r7 = a7s / a7n;"]
)


def _reduction(op: str, dtype) -> K.Reduction:
    dt = np.dtype(dtype)
    out = np.dtype(np.int64) if op.startswith("arg") else dt
    return K.Reduction(0, op, K.Load(0, 0, (1,), dt), out, 0)


def test_cpp_folds_the_blocks_partials_in_block_order_then_writes_the_results():
    assert CPP.combine([MEAN]) == [
        "int64_t a7n = parts[0].a7n;",
        "double a7s = parts[0].a7s;",
        "for (int64_t b = 1; b < n; ++b) {",
        "  a7n = a7n + parts[b].a7n;",
        "  a7s = a7s + parts[b].a7s;",
        "}",
        "const double r7 = a7s / a7n;",
    ]


def test_cuda_shuffles_within_a_warp_then_folds_the_warps_through_shared_memory():
    assert CUDA.combine([MEAN], rows=2, lanes=64) == [
        "for (int m = 16; m > 0; m >>= 1) {",
        "  const int64_t a7n_o = __shfl_xor_sync(0xffffffffu, a7n, m, 32);",
        "  const double a7s_o = __shfl_xor_sync(0xffffffffu, a7s, m, 32);",
        "  a7n = a7n + a7n_o;",
        "  a7s = a7s + a7s_o;",
        "}",
        "__shared__ int64_t s7_a7n[4];",
        "__shared__ double s7_a7s[4];",
        "if ((threadIdx.x & 31) == 0) {",
        "  s7_a7n[threadIdx.x >> 5] = a7n;",
        "  s7_a7s[threadIdx.x >> 5] = a7s;",
        "}",
        "__syncthreads();",
        "a7n = s7_a7n[row * 2];",
        "a7s = s7_a7s[row * 2];",
        "for (int q = 1; q < 2; ++q) {",
        "  a7n = a7n + s7_a7n[row * 2 + q];",
        "  a7s = a7s + s7_a7s[row * 2 + q];",
        "}",
        "const double r7 = a7s / a7n;",
    ]


def test_cuda_column_lanes_meet_in_shared_memory_and_a_lone_lane_needs_nothing():
    assert CUDA.combine([MEAN], rows=64, lanes=4, columns=True)[:6] == [
        "__shared__ int64_t s7_a7n[256];",
        "s7_a7n[threadIdx.x] = a7n;",
        "__shared__ double s7_a7s[256];",
        "s7_a7s[threadIdx.x] = a7s;",
        "__syncthreads();",
        "a7n = s7_a7n[row];",
    ]
    assert "  a7s = a7s + s7_a7s[q * 64 + row];" in CUDA.combine([MEAN], 64, 4, True)
    assert CUDA.combine([MEAN], rows=256, lanes=1, columns=True) == [MEAN.result[0]]
    assert CUDA.combine([MEAN], rows=256, lanes=1) == [MEAN.result[0]]


def test_argmax_partials_meet_in_index_order_on_cpp_and_in_any_order_on_cuda():
    r = _reduction("argmax", np.float32)
    cpp, cuda = Accumulator(r, CPP).partial(), Accumulator(r, CUDA).partial()
    assert cpp.merge(["bv", "bi"]) == [
        "if ((bv > a0v) || (bv != bv && a0v == a0v)) { a0v = bv; a0i = bi; }"
    ]
    assert cuda.merge(["bv", "bi"]) == [
        "if (tj_arg_better<float>(bv, bi, a0v, a0i, true)) { a0v = bv; a0i = bi; }"
    ]
    # CUDA lanes start with no candidate (index -1): an empty row is index 0
    assert cpp.result == ("const int64_t r0 = a0i;",)
    assert cuda.result == ("const int64_t r0 = a0i < 0 ? 0 : a0i;",)


def test_integer_sums_wrap_through_the_unsigned_type_where_overflow_is_undefined():
    r = _reduction("sum", np.int64)
    assert Accumulator(r, CPP).partial().merge(["b"]) == ["a0 = (a0 + b);"]  # -fwrapv
    assert Accumulator(r, CUDA).partial().merge(["b"]) == [
        "a0 = ((int64_t)((uint64_t)(a0) + (uint64_t)(b)));"
    ]


def test_a_compensated_sum_merges_another_threads_sum_and_error_by_two_sum():
    acc = Accumulator(_reduction("sum", np.float64), CUDA, compensated=True)
    part = acc.partial()
    assert part.fields == (("double", "a0"), ("double", "a0c"))
    assert part.merge(["x", "xc"]) == [
        "{",
        "  const double t = a0 + x;",
        "  const double p = t - a0;",
        "  a0c += ((a0 - (t - p)) + (x - p)) + xc;",
        "  a0 = t;",
        "}",
    ]
    assert part.result == ("const double r0 = isfinite(a0) ? a0 + a0c : a0;",)
