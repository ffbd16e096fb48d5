"""Elementwise NumPy functions (ufuncs) over primitives."""

from __future__ import annotations

import numpy as np

from tracejit.errors import TracejitValueError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.elementwise_ops import TNP_NAMES
from tracejit.numpy._core import aval_of, broadcast_all, cast, elementwise, promote
from tracejit.tracer.core import bind


def _unary_float(prim: str, doc_name: str):
    def fn(x):
        if prim == "exp" and dtypes.is_complex(aval_of(x)[0]):
            from tracejit.numpy._complex import complex_exp

            return complex_exp(x)
        return elementwise(prim, x, to_float="ufunc")

    fn.__name__ = doc_name
    fn.__doc__ = (
        f"Elementwise `np.{doc_name}`; ints and bools become the smallest float holding them "
        "(int8 -> float16, int32 -> float64), as in NumPy."
    )
    return fn


def _rounding(prim: str, name: str):
    def fn(x, decimals: int = 0):
        (x,) = promote(x)
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


def sign(x):
    (x,) = promote(x)
    return bind("sign", x)


def square(x):
    return multiply(x, x)


def reciprocal(x):
    (x,) = promote(x)
    if not dtypes.is_float(x.dtype):
        raise UnsupportedError("reciprocal of integers truncates in NumPy; cast to float first")
    return divide(1.0, x)


def add(x, y):
    return elementwise("add", x, y)


def subtract(x, y):
    return elementwise("sub", x, y)


def multiply(x, y):
    return elementwise("mul", x, y)


def divide(x, y):
    return elementwise("div", x, y, to_float=True)


true_divide = divide


def floor_divide(x, y):
    x, y = promote(x, y)
    if x.dtype == np.bool_:
        x, y = cast(x, np.int64), cast(y, np.int64)  # NumPy: bool // bool is int8
    # floats too: NumPy's float floor division is npy_divmod's quotient, not floor(x / y)
    # (1.0 // 0.1 is 9.0, since 0.1 is a little above 1/10; -inf // -84 is nan)
    return elementwise("floordiv", x, y)


def remainder(x, y):
    x, y = promote(x, y)
    if x.dtype == np.bool_:
        x, y = cast(x, np.int64), cast(y, np.int64)
    return elementwise("mod", x, y)


mod = remainder


def divmod(x, y):
    """`np.divmod(x, y)`: `(x // y, x % y)`, each with NumPy's semantics."""
    return floor_divide(x, y), remainder(x, y)


def power(x, y):
    x, y = promote(x, y)
    if x.dtype == np.bool_:
        x, y = cast(x, np.int64), cast(y, np.int64)
    return elementwise("pow", x, y)


pow = power


def maximum(x, y):
    return elementwise("max", x, y)


def minimum(x, y):
    return elementwise("min", x, y)


def fmax(x, y):
    return where(isnan(y), x, where(isnan(x), y, maximum(x, y)))


def fmin(x, y):
    return where(isnan(y), x, where(isnan(x), y, minimum(x, y)))


def arctan2(y, x):
    return elementwise("atan2", y, x, to_float="ufunc")


atan2 = arctan2


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


def _predicate(prim: str, name: str):
    def fn(x):
        (x,) = promote(x)
        return bind(prim, x)

    fn.__name__ = name
    return fn


def _compare(prim: str, name: str):
    def fn(x, y):
        return elementwise(prim, x, y, op=name)

    fn.__name__ = name
    return fn


def _logical(prim: str, name: str):
    def fn(x, y):
        x, y = cast(x, np.bool_), cast(y, np.bool_)
        return elementwise(prim, x, y, op=name)

    fn.__name__ = name
    return fn


def logical_not(x):
    return bind("not", cast(x, np.bool_))


def _bitwise(prim: str, name: str):
    def fn(x, y):
        x, y = promote(x, y)
        if dtypes.is_float(x.dtype):
            raise UnsupportedError(f"{name} is defined for integers and bools, not {x.dtype}")
        return elementwise(prim, x, y, op=name)

    fn.__name__ = name
    return fn


# One function per entry of ir/elementwise_ops and wrapper style, under each of its NumPy names.
_STYLES = {
    "float": _unary_float,
    "rounding": _rounding,
    "predicate": _predicate,
    "compare": _compare,
    "logical": _logical,
    "bitwise": _bitwise,
}
for _prim, _by_style in TNP_NAMES.items():
    for _style, _names in _by_style.items():
        globals().update(dict.fromkeys(_names, _STYLES[_style](_prim, _names[0])))
trunc, isnan = globals()["trunc"], globals()["isnan"]  # named for the functions above


def bitwise_not(x):
    (x,) = promote(x)
    if dtypes.is_float(x.dtype):
        raise UnsupportedError(f"bitwise_not is defined for integers and bools, not {x.dtype}")
    return bind("not", x)


invert = bitwise_invert = bitwise_not


def stop_gradient(x):
    """Identity whose gradient is zero (`jax.lax.stop_gradient`)."""
    (x,) = promote(x)
    return bind("stop_gradient", x)


def erf(x):
    """The error function (not in NumPy; used by `nn.gelu(approximate=False)`)."""
    return elementwise("erf", x, to_float=True)


__all__ = [
    n
    for n, v in list(globals().items())
    if callable(v) and getattr(v, "__module__", None) == __name__ and not n.startswith("_")
]
