"""Elementwise NumPy functions (ufuncs) over primitives."""

from __future__ import annotations

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import TracejitValueError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.elementwise_ops import TNP_NAMES
from tracejit.ir.primitives import get
from tracejit.numpy._core import aval_of, broadcast_all, cast, elementwise, promote
from tracejit.tracer.core import bind


def _same(name: str, xs):
    return xs  # NumPy's promotion is `elementwise`'s


def _bools_as_int8(name: str, xs):
    """Promoted; bools as int8, as NumPy's loops give (bool // bool, bool % bool and
    bool ** bool are int8; floats keep their dtype)."""
    xs = promote(*xs)
    return [cast(x, np.int8) for x in xs] if xs[0].dtype == np.bool_ else xs


def _as_bools(name: str, xs):
    return [cast(x, np.bool_) for x in xs]


def _no_floats(name: str, xs):
    xs = promote(*xs)
    if dtypes.is_float(xs[0].dtype):
        raise UnsupportedError(f"{name} is defined for integers and bools, not {xs[0].dtype}")
    return xs


# Wrapper styles of ir/elementwise_ops entries: (operands' preparation, `to_float`: ints and
# bools become float64 (True) or the smallest float holding them ("ufunc", NumPy's float
# ufuncs: int8 -> float16, int32 -> float64)).
_STYLES = {
    "plain": (_same, False),
    "float": (_same, "ufunc"),
    "true_float": (_same, True),
    "int_bool": (_bools_as_int8, False),
    "logical": (_as_bools, False),
    "bitwise": (_no_floats, False),
}


# x OP c for a Python int c outside x's integer dtype, when c is above (below) every value
_ABOVE = {"lt": True, "le": True, "gt": False, "ge": False, "eq": False, "ne": True}
_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _out_of_range_compare(prim: str, xs):
    """NumPy 2 (NEP 50) compares an integer array with a Python int outside its dtype's
    range (uint8 < -1 is False everywhere) instead of raising: that constant, or None."""
    if prim not in _ABOVE or len(xs) != 2:
        return None
    for k, (x, c) in enumerate((xs, xs[::-1])):
        dt = aval_of(x)[0]
        if type(c) is not int or dt.kind not in "iu":
            continue
        info = np.iinfo(dt)
        if info.min <= c <= info.max:
            return None
        op = prim if k == 0 else _SWAPPED[prim]
        value = _ABOVE[op] if c > info.max or op in ("eq", "ne") else not _ABOVE[op]
        return bind("eq" if value else "ne", x, x)  # all True / all False (x is no NaN)
    return None


def _wrapper(prim: str, name: str, style: str):
    """tnp's `name`: operands prepared as `style` says, promoted, broadcast, then `prim`."""
    prepare, to_float = _STYLES[style]

    def call(*xs):
        constant = _out_of_range_compare(prim, xs)
        if constant is not None:
            return constant
        for x in xs:
            if aval_of(x)[0].kind == "c":
                from tracejit.numpy._complex_math import COMPLEX_UFUNCS

                if prim in COMPLEX_UFUNCS:
                    return COMPLEX_UFUNCS[prim](*xs)
                break
        return elementwise(prim, *prepare(name, xs), to_float=to_float, op=name)

    if get(prim).rule.arity == 1:  # positional parameters, as NumPy's ufuncs

        def fn(x, /):
            return call(x)
    else:

        def fn(x1, x2, /):
            return call(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `np.{name}` (the `{prim}` primitive), NumPy's dtypes."
    return fn


def _rounding(prim: str, name: str, style: str = "rounding"):
    def fn(x, decimals: int = 0):
        (x,) = promote(x)
        if dtypes.is_complex(x.dtype):
            from tracejit.numpy._complex_math import complex_rounding

            return complex_rounding(fn, name, x, decimals)
        if not dtypes.is_float(x.dtype):
            return x  # rounding an integer or bool is the identity, as in NumPy
        if decimals:
            scale = 10.0**decimals
            return divide(bind(prim, multiply(x, scale)), scale)
        return bind(prim, x)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise `np.{name}`."
    return fn


def fix(x):
    return trunc(x)


def negative(x):
    (x,) = promote(x)
    if x.dtype == np.bool_:
        raise UnsupportedError("negative of a bool array is not supported; use logical_not")
    return bind("neg", x)


def positive(x):
    (x,) = promote(x)
    return x


def absolute(x):
    (x,) = promote(x)
    if dtypes.is_complex(x.dtype):  # real-valued, from the real and imaginary parts
        from tracejit.numpy._complex import complex_abs

        return complex_abs(x)
    return x if x.dtype == np.bool_ else bind("abs", x)


abs = absolute


def square(x):
    return multiply(x, x)


def reciprocal(x):
    (x,) = promote(x)
    if not dtypes.is_inexact(x.dtype):
        raise UnsupportedError("reciprocal of integers truncates in NumPy; cast to float first")
    if dtypes.is_complex(x.dtype):  # NumPy's own formula (not 1 / x: other special values)
        from tracejit.numpy._complex_math import reciprocal as complex_reciprocal

        return complex_reciprocal(x)
    return divide(1.0, x)


def divmod(x, y):
    """`np.divmod(x, y)`: `(x // y, x % y)`, each with NumPy's semantics."""
    return floor_divide(x, y), remainder(x, y)


def fmax(x, y):
    return where(isnan(y), x, where(isnan(x), y, maximum(x, y)))


def fmin(x, y):
    return where(isnan(y), x, where(isnan(x), y, minimum(x, y)))


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    a_min = a_min if a_min is not None else min
    a_max = a_max if a_max is not None else max
    if a_min is None and a_max is None:
        raise TracejitValueError("clip: give a_min, a_max or both")
    out = a
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


def where(condition, x=None, y=None):
    """`np.where(cond, x, y)`; the one-argument form has a data-dependent shape."""
    if x is None or y is None:
        raise UnsupportedError(
            "where(cond) with one argument returns data-dependent indices; use "
            "where(cond, x, y) instead"
        )
    x, y = promote(x, y)
    cond = cast(condition, np.bool_) if aval_of(condition)[0] != np.bool_ else condition
    cond, x, y = broadcast_all([cond, x, y], "where")
    return bind("select", cond, x, y)


# One function per entry of ir/elementwise_ops and wrapper style, under each of its NumPy names.
for _prim, _by_style in TNP_NAMES.items():
    for _style, _names in _by_style.items():
        _make = _rounding if _style == "rounding" else _wrapper
        globals().update(dict.fromkeys(_names, _make(_prim, _names[0], _style)))
# the generated functions this module's own functions call, by name
trunc, isnan, divide, multiply = (globals()[n] for n in ("trunc", "isnan", "divide", "multiply"))
maximum, minimum = globals()["maximum"], globals()["minimum"]
floor_divide, remainder = globals()["floor_divide"], globals()["remainder"]
globals()["stop_gradient"].__doc__ = "Identity whose gradient is zero (`jax.lax.stop_gradient`)."
globals()["erf"].__doc__ = "The error function (not in NumPy; `nn.gelu(approximate=False)`)."


__all__ = defined_here(globals())  # noqa: PLE0605
