"""The dtypes tracejit supports and NumPy 2 (NEP 50) promotion with weak Python scalars.

A *weak* value comes from a Python scalar: it takes the dtype of the array it meets
(`f32_array * 2.0` stays float32), as in NumPy 2 and JAX.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError

SUPPORTED = (
    np.dtype(np.bool_),
    np.dtype(np.int32),
    np.dtype(np.int64),
    np.dtype(np.float32),
    np.dtype(np.float64),
)
SHORT_NAMES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}
# The Python scalar standing for a weak value of each kind: np.result_type applies NEP 50 to it.
_WEAK_STANDIN = {"b": False, "i": 0, "f": 0.0}


def canonical(dtype) -> np.dtype:
    """The supported np.dtype for `dtype`, or UnsupportedError naming it."""
    dt = np.dtype(dtype)
    if dt not in SUPPORTED:
        names = ", ".join(str(d) for d in SUPPORTED)
        raise UnsupportedError(f"dtype {dt} is not supported; use one of: {names}")
    return dt


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_int(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


def short_name(dtype) -> str:
    return SHORT_NAMES.get(np.dtype(dtype), str(np.dtype(dtype)))


def python_scalar_dtype(x) -> np.dtype:
    """The dtype NumPy gives a lone Python scalar: bool, int64 or float64."""
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    raise UnsupportedError(f"Python value of type {type(x).__name__} is not an array scalar")


def result_type(*operands: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote (dtype, weak) pairs as NumPy 2 does; the result is weak iff every operand is."""
    strong = [dt for dt, weak in operands if not weak]
    weak = [_WEAK_STANDIN[np.dtype(dt).kind] for dt, w in operands if w]
    if not strong:
        return canonical(np.result_type(*[dt for dt, _ in operands])), True
    return canonical(np.result_type(*strong, *weak)), False
