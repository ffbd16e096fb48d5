"""`__array_ufunc__` / `__array_function__`: plain NumPy calls on tracers trace like tnp.

`np.exp(t)`, `np.sum(t, axis=1)`, `np.where(c, t, 0)` dispatch here and run the
`tracejit.numpy` function of the same name; anything else raises `UnsupportedError`.
"""

from __future__ import annotations

import sys

import numpy as np

from tracejit.errors import UnsupportedError

# ufunc.reduce on these ufuncs is the named reduction
_UFUNC_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}


def _tnp():
    return sys.modules["tracejit.numpy"]  # imported by now: tracers come from it


def array_ufunc(ufunc, method, inputs, kwargs):
    tnp = _tnp()
    if not kwargs and method == "__call__":  # np.tanh(t): the common case, in short
        fn = getattr(tnp, ufunc.__name__, None)
        if fn is not None:
            return fn(*inputs)
    if kwargs.get("out") is not None:
        raise UnsupportedError(
            f"np.{ufunc.__name__}(..., out=...) writes in place, which cannot be traced; "
            "use the returned value instead"
        )
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    for k in ("where", "casting", "order", "subok", "signature"):
        if k in kwargs:
            raise UnsupportedError(f"np.{ufunc.__name__}: the {k}= argument is not supported")
    dtype = kwargs.pop("dtype", None)
    if method == "__call__":
        fn = getattr(tnp, ufunc.__name__, None)
        if fn is None:
            raise UnsupportedError(
                f"NumPy ufunc np.{ufunc.__name__} is not supported on traced values"
            )
        out = fn(*inputs, **kwargs)
        return tnp.astype(out, dtype) if dtype is not None else out
    if method == "reduce" and ufunc.__name__ in _UFUNC_REDUCE:
        fn = getattr(tnp, _UFUNC_REDUCE[ufunc.__name__])
        kwargs.setdefault("axis", 0)
        return fn(*inputs, dtype=dtype, **kwargs) if dtype is not None else fn(*inputs, **kwargs)
    if method == "accumulate" and ufunc.__name__ == "add":
        kwargs.setdefault("axis", 0)
        return tnp.cumsum(*inputs, **kwargs)
    raise UnsupportedError(f"np.{ufunc.__name__}.{method} is not supported on traced values")


def array_function(func, args, kwargs):
    tnp = _tnp()
    module = getattr(func, "__module__", "") or ""
    name = func.__name__
    target = None
    if module == "numpy" or module.startswith(("numpy._core", "numpy.lib")):
        target = getattr(tnp, name, None)
    elif module in ("numpy.linalg", "numpy.fft"):
        target = getattr(getattr(tnp, module.split(".")[1], None), name, None)
    if target is None or target is func:  # tnp re-exports some NumPy functions as they are
        qual = f"{module}.{name}" if module else name
        raise UnsupportedError(
            f"NumPy function {qual} is not supported on traced values; use a tracejit.numpy "
            "function instead, or compute it outside the jitted function"
        )
    return target(*args, **kwargs)


__all__ = ["array_function", "array_ufunc", "np"]
