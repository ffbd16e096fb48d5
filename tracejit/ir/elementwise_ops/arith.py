"""Arithmetic binaries: + - * / // % ** max min atan2. Integers wrap (NumPy's overflow), and
divide by zero without trapping; semantics in ir/c_render.py's docstring."""

from __future__ import annotations

import numpy as np

from tracejit.ir.autodiff import zero_vjp
from tracejit.ir.c_render import C_LOW_PRECISION_RULES, LIBM_BINARY, in_float, libm_call, wrapping
from tracejit.ir.c_types import c_type
from tracejit.ir.elementwise_ops.entry import elementwise_op, square
from tracejit.ir.elementwise_ops.pow import pow_c, pow_impl, pow_vjp
from tracejit.ir.primitives import ANY, COMPLEX, FLOAT, NUM, TRANSCENDENTAL


def _wrapping_or(op: str, bool_op: str | None):
    """`a op b`, modulo 2**bits on integers, `bool_op` on bools."""

    def c(args, dt, out_dt, attrs, uses, d):
        a, b = args
        if dt.kind in "iu":
            return wrapping(op, a, b, dt)
        if bool_op and dt == np.bool_:
            return f"(({a}) {bool_op} ({b}))"
        return f"({a} {op} {b})"

    return c


def _helper(fn: str):
    """A call of the PRELUDE template `tj_<fn>_int` or `tj_<fn>_float`."""

    def c(args, dt, out_dt, attrs, uses, d):
        kind = "int" if dt.kind in "iu" else "float"
        return f"tj_{fn}_{kind}<{c_type(dt)}>({args[0]}, {args[1]})"

    return c


def _chooser(op: str, bool_op: str, tie_first: bool = False):
    def c(args, dt, out_dt, attrs, uses, d):
        a, b = args
        if dt == np.bool_:
            return f"(({a}) {bool_op} ({b}))"
        if dt.kind == "f":  # NaN in either operand wins, as np.maximum/np.minimum; a tie
            # (-0.0 and 0.0) gives b, as NumPy's float32/float64 loops (x86 maxpd) and
            # ml_dtypes' bfloat16 at every length, or a (`tie_first`: NumPy's float16 loop)
            cmp = op if tie_first else op.rstrip("=")
            return f"((({a}) {cmp} ({b}) || ({a}) != ({a})) ? ({a}) : ({b}))"
        return f"((({a}) {op} ({b})) ? ({a}) : ({b}))"

    return c


def _chooser_16(op: str, bool_op: str):
    """The 16-bit rendering: computed in float32, ties as the 16-bit type's own loop."""

    def low(rule, args, dt, out_dt, attrs, uses, d):
        own = _chooser(op, bool_op, tie_first=dt == np.float16)
        return in_float(own, args, dt, out_dt, attrs, uses, d)

    return low


def _chooser_share(e, x, y, pick: str):
    """Where x wins the max/min: 1; ties: 1/2 for each side (JAX's convention); else 0."""
    zero, half, one = e.full(0.0, x), e.full(0.5, x), e.full(1.0, x)
    return e.select(e.bind(pick, x, y), one, e.select(e.eq(x, y), half, zero))


def _chooser_vjp(pick: str):
    def vjp(e, ct, x, y, *, out):
        share = _chooser_share(e, x, y, pick)
        return [e.mul(ct, share), e.mul(ct, e.sub(e.full(1.0, share), share))]

    return vjp


def _div_vjp(e, ct, x, y, *, out):
    ct_x = e.div(ct, y)
    return [ct_x, e.neg(e.mul(ct_x, out))]


def _atan2_vjp(e, ct, y, x, *, out):
    denom = e.add(square(e, x), square(e, y))
    return [e.mul(ct, e.div(x, denom)), e.neg(e.mul(ct, e.div(y, denom)))]


def _binary(name, kinds, impl, vjp, c, cost: int = 1, tnp: tuple[str, ...] = (), style="plain"):
    """A binary entry; tnp's functions `tnp` (default: NumPy's ufunc `impl`) of `style`."""
    tnp = {style: tnp or (impl.__name__,)}
    elementwise_op(name, kinds, impl, vjp=vjp, c=c, arity=2, cost=cost, tnp=tnp)


_binary(  # on bool: logical or, as NumPy
    "add", ANY + COMPLEX, np.add, lambda e, ct, x, y, *, out: [ct, ct], _wrapping_or("+", "||")
)
_binary(
    "sub",
    NUM + COMPLEX,
    np.subtract,
    lambda e, ct, x, y, *, out: [ct, e.neg(ct)],
    _wrapping_or("-", None),
)
_binary(
    "mul",
    ANY + COMPLEX,
    np.multiply,
    lambda e, ct, x, y, *, out: [e.mul(ct, y), e.mul(x, ct)],
    _wrapping_or("*", "&&"),
)
_binary(
    "div",
    FLOAT + COMPLEX,
    np.true_divide,
    _div_vjp,
    lambda args, *_: f"({args[0]} / {args[1]})",
    tnp=("divide", "true_divide"),
    style="true_float",  # ints and bools become float64
)
_binary("floordiv", NUM, np.floor_divide, zero_vjp, _helper("floordiv"), style="int_bool")
_binary(  # x mod y = x - floor(x / y) * y (NumPy's floored remainder)
    "mod",
    NUM,
    np.remainder,
    lambda e, ct, x, y, *, out: [ct, e.neg(e.mul(ct, e.floor(e.div(x, y))))],
    _helper("mod"),
    tnp=("remainder", "mod"),
    style="int_bool",
)
_binary("pow", NUM, pow_impl, pow_vjp, pow_c, TRANSCENDENTAL, ("power", "pow"), "int_bool")
_binary("max", ANY, np.maximum, _chooser_vjp("gt"), _chooser(">=", "||"))
_binary("min", ANY, np.minimum, _chooser_vjp("lt"), _chooser("<=", "&&"))
C_LOW_PRECISION_RULES.register("max")(_chooser_16(">=", "||"))
C_LOW_PRECISION_RULES.register("min")(_chooser_16("<=", "&&"))
LIBM_BINARY["atan2"] = "atan2"
_binary(
    "atan2",
    FLOAT,
    np.arctan2,
    _atan2_vjp,
    libm_call("atan2"),
    TRANSCENDENTAL,
    ("arctan2", "atan2"),
    "float",
)
