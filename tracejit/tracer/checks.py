"""Checks on what a jitted function is given and returns, each failing with a named error.

Bad input must not become a silently wrong result: an `np.matrix` or masked array converted
to a plain array loses its `*` (matrix product) or its mask; a Python int that does not fit
the integer dtype it meets wraps around (NumPy raises OverflowError); a NaN static argument
never equals itself, so its compiled function is never found again and every call retraces.

>>> reject_subclass(np.ones(2), "x")
>>> check_static_value("n", float("nan"))
Traceback (most recent call last):
...
tracejit.errors.ArgumentError: static argument n is NaN, which is not equal to itself: every call would retrace. Pass it as a traced (array or Python scalar) argument instead
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from tracejit.errors import ArgumentError, IntegerOverflowError

_SUBCLASS_HINTS = {
    "matrix": "np.matrix's * is a matrix product, which a plain array would not keep: pass "
    "np.asarray(x) and write the product as x @ y",
    "MaskedArray": "the mask would be lost: pass x.filled(fill_value) (or x.data) and the mask "
    "(np.ma.getmaskarray(x)) as separate arguments",
}


def reject_subclass(x, name: str) -> None:
    """ArgumentError when `x` is an instance of a proper ndarray subclass.

    tracejit computes on plain arrays; a subclass's own semantics (np.matrix's `*`,
    np.ma's mask, units, ...) would be dropped without a word.
    """
    refuse = getattr(type(x), "_tracejit_refuse", None)  # a donated array (donated_array.py)
    if refuse is not None:
        refuse(x, name)
    plain = getattr(type(x), "_tracejit_plain_array", False)  # tnp's ConstArray: a plain array
    if isinstance(x, np.ndarray) and type(x) is not np.ndarray and not plain:
        cls = type(x)
        hint = _SUBCLASS_HINTS.get(cls.__name__, "pass np.asarray(x) if a plain array is meant")
        raise ArgumentError(
            f"{name} is a {cls.__module__}.{cls.__qualname__}, a subclass of np.ndarray that "
            f"tracejit does not support ({hint})"
        )


def int_fits(value, dtype) -> bool:
    """Whether `value` is not a Python int, or one within the range of integer `dtype`."""
    dt = np.dtype(dtype)
    if dt.kind not in "iu" or isinstance(value, bool) or not isinstance(value, int):
        return True
    info = np.iinfo(dt)
    return info.min <= value <= info.max


def check_int_fits(value, dtype, name: str = "a Python int") -> None:
    """IntegerOverflowError when the Python int `value` is out of range of integer `dtype`."""
    if not int_fits(value, dtype):
        dt = np.dtype(dtype)
        info = np.iinfo(dt)
        raise IntegerOverflowError(
            f"{name} ({value}) is out of bounds for {dt} [{info.min}, {info.max}] (NumPy raises "
            f"OverflowError too); use a wider dtype (e.g. np.int64 or float) for the array"
        )


def _nan_inside(v, depth: int = 0) -> bool:
    if isinstance(v, (float, np.floating)):
        return math.isnan(v)
    if depth < 8 and isinstance(v, (tuple, frozenset)):
        return any(_nan_inside(e, depth + 1) for e in v)
    return False


def check_static_value(name, v) -> None:
    """ArgumentError for a static argument holding NaN (never equal to the cached one)."""
    if _nan_inside(v):
        raise ArgumentError(
            f"static argument {name} is NaN, which is not equal to itself: every call would "
            "retrace. Pass it as a traced (array or Python scalar) argument instead"
        )


def _positional_capacity(fun) -> tuple[list[str] | None, bool, bool]:
    """(parameter names, whether *args exists, whether **kwargs exists); names None when
    the signature is unknown."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None, True, True
    kinds = {p.kind for p in params}
    return (
        [p.name for p in params],
        inspect.Parameter.VAR_POSITIONAL in kinds,
        inspect.Parameter.VAR_KEYWORD in kinds,
    )


def check_static_spec(fun, static_argnums, static_argnames, label: str) -> None:
    """ArgumentError for static_argnums that are negative, not ints, or past the function's
    positional parameters, and static_argnames it has no parameter for."""
    names, var_args, var_kwargs = _positional_capacity(fun)
    positional = None
    if names is not None and not var_args:
        params = inspect.signature(fun).parameters.values()
        positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    for i in static_argnums:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise ArgumentError(f"{label}: static_argnums must be ints, got {i!r}")
        if i < 0:
            raise ArgumentError(
                f"{label}: static_argnums={i} is negative; give the position counted from 0, "
                "or name the parameter in static_argnames"
            )
        if positional is not None and i >= positional:
            raise ArgumentError(
                f"{label}: static_argnums={i}, but the function takes {positional} positional "
                f"parameter(s) ({', '.join(names[:positional])})"
            )
    for n in static_argnames:
        if not isinstance(n, str):
            raise ArgumentError(f"{label}: static_argnames must be strings, got {n!r}")
        if names is not None and not var_kwargs and n not in names:
            raise ArgumentError(
                f"{label}: static_argnames={n!r} is not a parameter of the function "
                f"(parameters: {', '.join(names) or 'none'})"
            )


def weak_int_targets(graph, avals) -> list[tuple[int, np.dtype]]:
    """(input index, dtype) for each weak (Python int) input that `graph` converts to a
    narrower integer dtype: its value must be range-checked on every call, as NumPy's
    `int32_array + 2**40` raises instead of wrapping."""
    weak = {
        v: i
        for i, (v, (_, dtype, is_weak)) in enumerate(zip(graph.inputs, avals))
        if is_weak and np.dtype(dtype).kind == "i"
    }
    found: dict[int, np.dtype] = {}
    for node in graph.nodes:
        if node.prim.name != "convert" or node.inputs[0] not in weak:
            continue
        target = np.dtype(node.outputs[0].dtype)
        i = weak[node.inputs[0]]
        narrower = target.kind in "iu" and target.itemsize < np.dtype(avals[i][1]).itemsize
        if narrower and (i not in found or target.itemsize < found[i].itemsize):
            found[i] = target
    return sorted(found.items())


def bad_output(leaf, i: int, label: str) -> ArgumentError:
    """The error for output leaf `i` that is not an array or a Python scalar."""
    return ArgumentError(
        f"{label} returned a {type(leaf).__module__}.{type(leaf).__qualname__} as output {i}; "
        "a jitted function must return arrays, Python scalars, or pytrees (tuples, lists, "
        "dicts) of them. Return the non-array value from outside the jitted function"
    )


__all__ = [
    "bad_output",
    "check_int_fits",
    "check_static_spec",
    "check_static_value",
    "int_fits",
    "reject_subclass",
    "weak_int_targets",
]
