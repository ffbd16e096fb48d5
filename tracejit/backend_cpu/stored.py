"""The executable's metadata stored beside its library in a graph-keyed cache entry.

`dumps((schedule, in_spec))` pickles what `CpuExecutable` needs besides the library, with
primitives by name (their rules are closures; the registry gives the same object back).
It returns None for a schedule that cannot be stored (an attribute without a pickled form,
or kernel expressions nested deeper than the recursion limit, as in a long elementwise chain):
that function is then cached by its source only, and a fresh process runs the compile
phases for it. The entry is checksummed, and its key holds tracejit's sources, so `loads`
reads only bytes this tracejit wrote; an unknown primitive (one a test registered in
another process) raises, and the cache treats the entry as unloadable and rebuilds it.

>>> import numpy as np
>>> from tracejit.ir.primitives import get
>>> loads(dumps(([get("add")], [((3,), np.dtype("f4"))])))[0][0] is get("add")
True
"""

from __future__ import annotations

import io
import pickle

from tracejit.ir.primitives import Primitive
from tracejit.ir.primitives import get as get_primitive

EXECUTABLE_FILE = "executable.pkl"


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Primitive):
            return get_primitive, (obj.name,)
        return NotImplemented


def dumps(obj) -> bytes | None:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=4).dump(obj)
    except (pickle.PicklingError, AttributeError, TypeError, RecursionError):
        return None  # e.g. a closure attribute, or an expression too deeply nested
    return buffer.getvalue()


def loads(data: bytes):
    return pickle.loads(data)  # checksummed bytes that this tracejit wrote


__all__ = ["EXECUTABLE_FILE", "dumps", "loads"]
