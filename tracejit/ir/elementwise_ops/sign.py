"""Negation, abs, sign, not (logical on bools, bitwise on ints) and stop_gradient."""

from __future__ import annotations

import numpy as np

from tracejit.ir.autodiff import zero_vjp
from tracejit.ir.c_render import math_call, wrapping
from tracejit.ir.c_types import c_type
from tracejit.ir.elementwise_ops.entry import elementwise_op
from tracejit.ir.primitives import ANY, COMPLEX, INT_BOOL, NUM

_fabs = math_call("fabs")


def _neg_c(args, dt, out_dt, attrs, uses, d):
    (a,) = args
    return wrapping("-", "0", a, dt) if dt.kind in "iu" else f"(-{a})"


def _abs_c(args, dt, out_dt, attrs, uses, d):
    (a,) = args
    if dt.kind == "f":
        return _fabs(args, dt, out_dt, attrs, uses, d)
    if dt.kind == "u":
        return a
    return f"(({a}) < 0 ? {wrapping('-', '0', a, dt)} : ({a}))"


def _sign_c(args, dt, out_dt, attrs, uses, d):
    (a,) = args
    s = f"(({c_type(dt)})((({a}) > 0) - (({a}) < 0)))"
    return f"(({a}) != ({a}) ? ({a}) : {s})" if dt.kind == "f" else s  # sign(nan) is nan


def _not_c(args, dt, out_dt, attrs, uses, d):
    (a,) = args
    return f"(!({a}))" if dt == np.bool_ else f"(({c_type(dt)})~({a}))"


elementwise_op(
    "neg", NUM + COMPLEX, np.negative, vjp=lambda e, ct, x, *, out: [e.neg(ct)], c=_neg_c
)
elementwise_op(  # sign(0) = 0: the subgradient JAX picks at the kink
    "abs", NUM, np.abs, vjp=lambda e, ct, x, *, out: [e.mul(ct, e.sign(x))], c=_abs_c
)
elementwise_op("sign", NUM, np.sign, vjp=zero_vjp, c=_sign_c, tnp={"plain": ("sign",)})
_NOT = {"bitwise": ("bitwise_not", "invert", "bitwise_invert"), "logical": ("logical_not",)}
elementwise_op("not", INT_BOOL, np.invert, vjp=zero_vjp, c=_not_c, tnp=_NOT)
elementwise_op(  # an identity whose cotangent is zero
    "stop_gradient",
    ANY,
    lambda x: x,
    vjp=zero_vjp,
    c=lambda args, *_: args[0],
    tnp={"plain": ("stop_gradient",)},
)
