"""Rounding (float only: tnp returns integers unchanged) and the float tests (bool results).
Both are piecewise constant: their derivative is zero."""

from __future__ import annotations

import numpy as np

from tracejit.ir.autodiff import zero_vjp
from tracejit.ir.c_render import math_call
from tracejit.ir.elementwise_ops.entry import elementwise_op
from tracejit.ir.primitives import ANY, FLOAT


def _rounding(name: str, impl, builtin: str, numpy: tuple[str, ...]) -> None:
    c = math_call(builtin)  # an instruction through a compiler builtin
    elementwise_op(name, FLOAT, impl, vjp=zero_vjp, c=c, tnp={"rounding": numpy})


_rounding("floor", np.floor, "floor", ("floor",))
_rounding("ceil", np.ceil, "ceil", ("ceil",))
_rounding("trunc", np.trunc, "trunc", ("trunc",))
_rounding("round", np.round, "nearbyint", ("round", "around", "round_"))  # half to even


def _test(name: str, impl, float_c, other: str) -> None:
    """A float test: `float_c(a, d)` on floats, the constant `other` on ints and bools."""

    def c(args, dt, out_dt, attrs, uses, d):
        return float_c(args[0], d) if dt.kind == "f" else other

    tnp = {"plain": (name,)}
    elementwise_op(name, ANY, impl, vjp=zero_vjp, c=c, out_dtype=np.bool_, tnp=tnp)


_test("isnan", np.isnan, lambda a, d: f"(({a}) != ({a}))", "false")
_test("isinf", np.isinf, lambda a, d: f"{d.math('isinf')}({a})", "false")
_test("isfinite", np.isfinite, lambda a, d: f"{d.math('isfinite')}({a})", "true")
