"""Trigonometric and hyperbolic functions and their inverses: libm calls, float only."""

from __future__ import annotations

import numpy as np

from tracejit.ir.elementwise_ops.entry import libm_unary, one_minus_sq, square


def _acosh_vjp(e, ct, x, *, out):
    # sqrt(x-1)*sqrt(x+1) rather than sqrt(x*x-1): no cancellation near x = 1
    one = e.full(1.0, x)
    return [e.div(ct, e.mul(e.sqrt(e.sub(x, one)), e.sqrt(e.add(x, one))))]


libm_unary("sin", np.sin, lambda e, ct, x, *, out: [e.mul(ct, e.cos(x))])
libm_unary("cos", np.cos, lambda e, ct, x, *, out: [e.neg(e.mul(ct, e.sin(x)))])
libm_unary(
    "tan", np.tan, lambda e, ct, x, *, out: [e.mul(ct, e.add(e.full(1.0, out), square(e, out)))]
)
libm_unary(
    "asin",
    np.arcsin,
    lambda e, ct, x, *, out: [e.div(ct, e.sqrt(one_minus_sq(e, x)))],
    ("arcsin", "asin"),
)
libm_unary(
    "acos",
    np.arccos,
    lambda e, ct, x, *, out: [e.neg(e.div(ct, e.sqrt(one_minus_sq(e, x))))],
    ("arccos", "acos"),
)
libm_unary(
    "atan",
    np.arctan,
    lambda e, ct, x, *, out: [e.div(ct, e.add(e.full(1.0, x), square(e, x)))],
    ("arctan", "atan"),
)
libm_unary("sinh", np.sinh, lambda e, ct, x, *, out: [e.mul(ct, e.cosh(x))])
libm_unary("cosh", np.cosh, lambda e, ct, x, *, out: [e.mul(ct, e.sinh(x))])
libm_unary("tanh", np.tanh, lambda e, ct, x, *, out: [e.mul(ct, one_minus_sq(e, out))])
libm_unary(
    "asinh",
    np.arcsinh,
    lambda e, ct, x, *, out: [e.div(ct, e.sqrt(e.add(square(e, x), e.full(1.0, x))))],
    ("arcsinh", "asinh"),
)
libm_unary("acosh", np.arccosh, _acosh_vjp, ("arccosh", "acosh"))
libm_unary(
    "atanh",
    np.arctanh,
    lambda e, ct, x, *, out: [e.div(ct, one_minus_sq(e, x))],
    ("arctanh", "atanh"),
)
