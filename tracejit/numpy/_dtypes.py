"""dtypes as NumPy's types: scalar types, `dtype`, `finfo`, `iinfo` and promotion queries.

`tnp.float32` is a subclass of `np.float32`, so it works wherever NumPy takes a type
(`np.dtype(tnp.float32)`, `astype`, `dtype=`, `issubdtype`, `finfo`). Called on a traced value
it converts it (`tnp.int64(x)` inside `jit`), which `np.int64` itself cannot do: NumPy's
scalar constructors must return a concrete scalar. On concrete values it returns NumPy's own
scalar or array (`tnp.float32(3)` is `np.float32(3.0)`). This is JAX's design too:
`jnp.float32` is not `np.float32` but converts tracers.

The other NumPy scalar types and the abstract type hierarchy (`floating`, `integer`, ...) are
NumPy's own objects; tracejit computes in bool, int32, int64, float32 and float64.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.float32(3), np.dtype(tnp.float32), tnp.zeros(2, tnp.int32).dtype
(np.float32(3.0), dtype('float32'), dtype('int32'))
"""

from __future__ import annotations

import numpy as np

from tracejit.ir import dtypes
from tracejit.numpy._core import _flat, aval_of, cast
from tracejit.tracer.core import Tracer


def _has_tracer(x) -> bool:
    if isinstance(x, Tracer):
        return True
    return isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) for e in _flat(x))


def _scalar_type(base: type) -> type:
    """A subclass of NumPy's scalar type `base` whose constructor also converts tracers."""

    def __new__(cls, value=0):
        if _has_tracer(value):
            from tracejit.numpy._creation import asarray

            return cast(asarray(value), base)
        return base(value)

    return type(base.__name__, (base,), {"__new__": __new__, "__module__": __name__})


bool_ = _scalar_type(np.bool_)
int32 = _scalar_type(np.int32)
int64 = _scalar_type(np.int64)
float32 = single = _scalar_type(np.float32)
float64 = double = _scalar_type(np.float64)
int_ = int64  # NumPy 2's default integer
float_ = float64

# NumPy's own type objects: usable as dtype names, not as tracejit compute dtypes.
int8, int16 = np.int8, np.int16
uint8, uint16, uint32, uint64, uint = np.uint8, np.uint16, np.uint32, np.uint64, np.uint
float16 = np.float16
complex64, complex128 = np.complex64, np.complex128
csingle, cdouble, complex_ = np.complex64, np.complex128, np.complex128
object_ = np.object_
generic, number, integer = np.generic, np.number, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
character, flexible = np.character, np.flexible

dtype = np.dtype
finfo = np.finfo
iinfo = np.iinfo
issubdtype = np.issubdtype
promote_types = np.promote_types


def _operand_aval(x) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an array, tracer, Python scalar or dtype-like argument."""
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(x), False
    return aval_of(x)


def result_type(*arrays_and_dtypes) -> np.dtype:
    """`np.result_type` with NEP 50 weak Python scalars; traced values count by their dtype.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.result_type(np.ones(2, np.float32), 2.0), tnp.result_type(tnp.int32, tnp.float32)
    (dtype('float32'), dtype('float64'))
    """
    avals = [_operand_aval(x) for x in arrays_and_dtypes]
    if all(dt in dtypes.SUPPORTED for dt, _ in avals):
        return dtypes.result_type(*avals)[0]
    standins = [
        {"b": False, "i": 0, "f": 0.0}.get(dt.kind, dt) if weak else dt for dt, weak in avals
    ]
    return np.result_type(*standins)


def can_cast(from_, to, casting: str = "safe") -> bool:
    """`np.can_cast` for dtypes, arrays and traced values (by their dtype).

    >>> import tracejit.numpy as tnp
    >>> tnp.can_cast(tnp.int32, tnp.float64), tnp.can_cast(tnp.float64, tnp.int32)
    (True, False)
    """
    src = from_.dtype if isinstance(from_, (Tracer, np.ndarray)) else np.dtype(from_)
    return bool(np.can_cast(src, np.dtype(to), casting))


__all__ = [
    n
    for n in list(globals())
    if not n.startswith("_")
    and n not in ("annotations", "np", "dtypes", "aval_of", "cast", "Tracer")
]
