"""Exponentials, logarithms, sqrt and erf: float only."""

from __future__ import annotations

import math

import numpy as np

from tracejit.ir.c_render import math_call
from tracejit.ir.elementwise_ops.entry import elementwise_op, libm_unary, scale, square
from tracejit.ir.primitives import FLOAT

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    return np.asarray(_erf_scalar(x)).astype(x.dtype)  # 0-d input gives a Python float


def _erf_vjp(e, ct, x, *, out):
    dens = e.exp(e.neg(square(e, x)))
    return [e.mul(ct, scale(e, dens, 2.0 / math.sqrt(math.pi)))]


libm_unary("exp", np.exp, lambda e, ct, x, *, out: [e.mul(ct, out)])
libm_unary("exp2", np.exp2, lambda e, ct, x, *, out: [e.mul(ct, scale(e, out, _LN2))])
libm_unary("log", np.log, lambda e, ct, x, *, out: [e.div(ct, x)])
libm_unary("log2", np.log2, lambda e, ct, x, *, out: [e.div(ct, scale(e, x, _LN2))])
libm_unary("log10", np.log10, lambda e, ct, x, *, out: [e.div(ct, scale(e, x, _LN10))])
libm_unary("log1p", np.log1p, lambda e, ct, x, *, out: [e.div(ct, e.add(x, e.full(1.0, x)))])
libm_unary("expm1", np.expm1, lambda e, ct, x, *, out: [e.mul(ct, e.add(out, e.full(1.0, out)))])
libm_unary("erf", _erf, _erf_vjp, style="true_float")  # not in NumPy: ints become float64
elementwise_op(
    "sqrt",
    FLOAT,
    np.sqrt,
    vjp=lambda e, ct, x, *, out: [e.div(ct, scale(e, out, 2.0))],
    c=math_call("sqrt"),  # an instruction (a compiler builtin), not a libm call
    tnp={"float": ("sqrt",)},
)
