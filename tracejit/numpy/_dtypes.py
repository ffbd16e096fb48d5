"""dtypes of tracejit.numpy are NumPy's types; `dtype`, `finfo`, `iinfo` and promotion queries.

`tnp.float32 is np.float32`, so a type works wherever NumPy takes one (`astype`, `dtype=`,
`np.dtype(tnp.float32)`) and `tnp.float32(3)` is NumPy's scalar. bfloat16 is
`ml_dtypes.bfloat16`, the type JAX uses. NumPy's scalar constructors cannot return a traced
value, so inside `jit` convert with `x.astype(tnp.int8)` or `tnp.asarray(x, tnp.int8)`
(JAX's `jnp.float32` is a wrapper class for that reason; here identity with NumPy won).

The queries (`result_type`, `promote_types`, `can_cast`, `issubdtype`, `isdtype`, `finfo`)
match NumPy's and also know bfloat16, which NumPy's own reject or promote to float64; see
tracejit/ir/dtypes.py for its promotion.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.float32 is np.float32, tnp.float32(3), tnp.zeros(2, tnp.int8).dtype
(True, np.float32(3.0), dtype('int8'))
>>> tnp.promote_types(tnp.bfloat16, tnp.float16), tnp.issubdtype(tnp.bfloat16, tnp.floating)
(dtype('float32'), True)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tracejit.ir import dtypes as _dt
from tracejit.numpy._core import aval_of as _aval_of
from tracejit.tracer.core import Tracer as _Tracer

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64, uint = np.uint8, np.uint16, np.uint32, np.uint64, np.uint
float16, float32, float64 = np.float16, np.float32, np.float64
bfloat16 = ml_dtypes.bfloat16
complex64, complex128 = np.complex64, np.complex128
half, single, double = np.float16, np.float32, np.float64
csingle, cdouble, complex_ = np.complex64, np.complex128, np.complex128
int_, float_ = np.int64, np.float64  # NumPy 2's defaults
object_ = np.object_
generic, number, integer = np.generic, np.number, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
character, flexible = np.character, np.flexible

dtype = np.dtype
iinfo = np.iinfo


def _as_dtype(x) -> np.dtype:
    if isinstance(x, (_Tracer, np.ndarray, np.generic)):
        return np.dtype(x.dtype)
    return np.dtype(x)


def finfo(dtype):
    """`np.finfo`; for bfloat16 ml_dtypes' (NumPy's rejects it).

    >>> import tracejit.numpy as tnp
    >>> float(tnp.finfo(tnp.bfloat16).eps), float(tnp.finfo(tnp.float32).eps)
    (0.0078125, 1.1920928955078125e-07)
    """
    return _dt.finfo(_as_dtype(dtype))


def issubdtype(arg1, arg2) -> bool:
    """`np.issubdtype`; bfloat16 counts as `floating` (and `inexact`, `number`), as in JAX.

    >>> import tracejit.numpy as tnp
    >>> tnp.issubdtype(tnp.bfloat16, tnp.inexact), tnp.issubdtype(tnp.uint8, tnp.signedinteger)
    (True, False)
    """
    if _is_bf16(arg1):
        if _is_bf16(arg2):
            return True
        return isinstance(arg2, type) and issubclass(np.float16, arg2) and arg2 is not np.float16
    if _is_bf16(arg2):
        return False
    return bool(np.issubdtype(arg1, arg2))


def _is_bf16(x) -> bool:
    try:
        return np.dtype(x) == _dt.BFLOAT16 and not (isinstance(x, type) and x is np.generic)
    except TypeError:
        return False


def isdtype(dtype, kind) -> bool:
    """Array-API `isdtype`; accepts dtype names like "float32" and knows bfloat16.

    >>> import tracejit.numpy as tnp
    >>> tnp.isdtype("float32", "real floating"), tnp.isdtype(tnp.bfloat16, "real floating")
    (True, True)
    """
    dt = np.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if dt == _dt.BFLOAT16:
        return kind in ("real floating", "numeric") if isinstance(kind, str) else _is_bf16(kind)
    return bool(np.isdtype(dt, kind if isinstance(kind, str) else np.dtype(kind)))


def promote_types(type1, type2) -> np.dtype:
    """`np.promote_types`, knowing bfloat16 (bfloat16 with float16 gives float32, as in JAX).

    >>> import tracejit.numpy as tnp
    >>> tnp.promote_types(tnp.int8, tnp.uint8), tnp.promote_types(tnp.bfloat16, tnp.int8)
    (dtype('int16'), dtype(bfloat16))
    """
    return _dt.result_type((np.dtype(type1), False), (np.dtype(type2), False))[0]


def _operand_aval(x) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an array, tracer, Python scalar or dtype-like argument."""
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(x), False
    return _aval_of(x)


def result_type(*arrays_and_dtypes) -> np.dtype:
    """`np.result_type` with NEP 50 weak Python scalars; traced values count by their dtype.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.result_type(np.ones(2, np.float32), 2.0), tnp.result_type(tnp.int32, tnp.float32)
    (dtype('float32'), dtype('float64'))
    """
    avals = [_operand_aval(x) for x in arrays_and_dtypes]
    if all(dt in _dt.SUPPORTED for dt, _ in avals):
        return _dt.result_type(*avals)[0]
    standins = [_dt._WEAK_STANDIN[_dt.category(dt)] if weak else dt for dt, weak in avals]
    return np.result_type(*standins)


def can_cast(from_, to, casting: str = "safe") -> bool:
    """`np.can_cast` for dtypes, arrays and traced values (by their dtype).

    >>> import tracejit.numpy as tnp
    >>> tnp.can_cast(tnp.int32, tnp.float64), tnp.can_cast(tnp.float64, tnp.int32)
    (True, False)
    """
    return bool(np.can_cast(_as_dtype(from_), np.dtype(to), casting))


__all__ = [
    n
    for n in list(globals())
    if not n.startswith("_") and n not in ("annotations", "np", "ml_dtypes")
]
