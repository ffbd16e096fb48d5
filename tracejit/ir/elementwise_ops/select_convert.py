"""`select` (a choice between two operands by a bool condition) and `convert` (a dtype cast):
the two elementwise primitives with shape/dtype rules of their own, one entry each."""

from __future__ import annotations

from functools import partial

import numpy as np

from tracejit.errors import TracejitTypeError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import VJP_RULES
from tracejit.ir.c_render import C_LOW_PRECISION_RULES, C_RULES, in_float, literal
from tracejit.ir.c_types import c_type, real_dtype
from tracejit.ir.cwriter.dialect import Dialect
from tracejit.ir.primitives import ELEMENTWISE, register, same_shape


def _select_rule(avals):
    cond, x, y = avals
    shape = same_shape("select", avals)
    if cond[1] != np.bool_:
        raise TracejitTypeError(f"select: condition must be bool, got {cond[1]}")
    if x[1] != y[1]:
        raise TracejitTypeError(f"select: branch dtypes differ: {x[1]} and {y[1]}")
    return (shape, x[1], x[2] and y[2])


def _select_vjp(e, ct, cond, x, y, *, out):
    zero = e.full(0.0, ct)
    return [None, e.select(cond, ct, zero), e.select(cond, zero, ct)]


register(
    "select",
    ELEMENTWISE,
    _select_rule,
    lambda c, x, y: np.where(c, x, y),
    rules={
        VJP_RULES: _select_vjp,
        C_RULES: lambda args, *_: f"(({args[0]}) ? ({args[1]}) : ({args[2]}))",
        C_LOW_PRECISION_RULES: partial(in_float, first=1),  # the condition is a bool
    },
)


def _convert_rule(avals, dtype, weak=False):
    ((shape, _, _),) = avals
    return (shape, dtypes.canonical(dtype), weak)


def _convert_impl(x, dtype, weak=False):
    return x.astype(dtype)


def _convert_vjp(e, ct, x, *, out, dtype, weak=False):
    if not dtypes.is_inexact(x.dtype):
        return [None]
    if dtypes.is_complex(ct.dtype) and not dtypes.is_complex(x.dtype):
        ct = e.real(ct)  # real -> complex transposes to the real part (JAX's convention)
    return [ct if ct.dtype == x.dtype else e.convert(ct, dtype=x.dtype)]


def convert_c(x: str, src, dst, d: Dialect) -> str:
    """The C expression converting `x` from dtype `src` to `dst` with NumPy's semantics."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    if src.kind == "c":  # NumPy: to complex part by part, to a real type the real part
        if dst.kind == "c":
            part = c_type(real_dtype(dst))
            return f"{c_type(dst)}(({part})({x}).re, ({part})({x}).im)"
        if dst == np.bool_:
            return f"(({x}).re != 0 || ({x}).im != 0)"
        return convert_c(f"({x}).re", real_dtype(src), dst, d)
    if dst.kind == "c":
        part = real_dtype(dst)
        return f"{c_type(dst)}({convert_c(x, src, part, d)})"
    if dst == np.bool_:
        return f"({x} != 0)"
    if src.kind == "f" and dst.kind == "u" and dst.itemsize < 8:  # as NumPy: through int64
        return f"(({c_type(dst)})({convert_c(x, src, np.dtype(np.int64), d)}))"
    if src.kind == "f" and dst.kind in "iu":
        bits = dst.itemsize * 8
        signed = dst.kind == "i"
        # unsigned: every x > -1 truncates into range ((uint64_t)-0.5 is 0 in C and NumPy;
        # a bound of 0.0 sent -0.5 to the out-of-range 2**63)
        low = -(2.0 ** (bits - 1)) if signed else float(np.nextafter(src.type(-1), src.type(0)))
        lo = literal(low, src, d)
        hi = literal(2.0 ** (bits - 1) if signed else 2.0**bits, src, d)
        return f"tj_float_to_int<{c_type(dst)}, {c_type(src)}>({x}, {lo}, {hi})"
    return f"(({c_type(dst)})({x}))"


def _convert_low_precision(rule, args, dt, out_dt, attrs, uses, d: Dialect) -> str:
    """float64 -> float16 rounds once, as NumPy does (through float32 rounded to odd: never
    twice); every other conversion from or to a 16-bit float goes through float32."""
    if dt == np.float64 and out_dt == np.float16:
        return f"((tj_f16)(tj_f64_to_f32_odd({args[0]})))"
    return in_float(rule, args, dt, out_dt, attrs, uses, d)


register(
    "convert",
    ELEMENTWISE,
    _convert_rule,
    _convert_impl,
    rules={
        VJP_RULES: _convert_vjp,
        C_RULES: lambda args, dt, out_dt, attrs, uses, d: convert_c(args[0], dt, out_dt, d),
        C_LOW_PRECISION_RULES: _convert_low_precision,
    },
)
