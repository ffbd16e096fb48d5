"""An executable's metadata stored beside its library in a graph-keyed cache entry.

`dumps(obj)` pickles what an executable needs besides its library (the CPU backend: the
schedule, input spec and native loops; the CUDA backend: the schedule and program), with
primitives by name (their rules are closures; the registry gives the same object back).
Kernel expressions of a long fused elementwise chain nest hundreds of levels deep, past
Python's recursion limit for the pickler; those are pickled again by the pure-Python pickler
on a thread with a large stack and a raised limit (unpickling is not recursive).
It returns None for a schedule that cannot be stored (an attribute without a pickled form):
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
import sys
import threading

from tracejit.ir.primitives import Primitive
from tracejit.ir.primitives import get as get_primitive

EXECUTABLE_FILE = "executable.pkl"
# What running needs (a few buffers' types, constants, callbacks), stored apart from the
# schedule: a warm cache hit unpickles only this (the 400-step RNN's schedule: ~30 ms).
RUN_FILE = "run.pkl"


# For deeply nested schedules: the recursion limit and thread stack of the retry.
_DEEP_RECURSION = 200_000
_DEEP_STACK_BYTES = 512 * 1024 * 1024


def _by_name(obj):
    if isinstance(obj, Primitive):
        return get_primitive, (obj.name,)
    return NotImplemented


class _Pickler(pickle.Pickler):
    reducer_override = staticmethod(_by_name)


class _PyPickler(pickle._Pickler):  # the pure-Python one: its recursion is Python frames
    reducer_override = staticmethod(_by_name)


def _dump(pickler: type, obj) -> bytes:
    buffer = io.BytesIO()
    pickler(buffer, protocol=4).dump(obj)
    return buffer.getvalue()


def dumps(obj) -> bytes | None:
    try:
        return _dump(_Pickler, obj)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None  # e.g. a closure in an attribute
    except RecursionError:
        return _dump_deep(obj)


def _dump_deep(obj) -> bytes | None:
    result: list = [None]

    def work() -> None:
        try:
            result[0] = _dump(_PyPickler, obj)
        except (pickle.PicklingError, AttributeError, TypeError, RecursionError):
            pass

    limit = sys.getrecursionlimit()
    stack = threading.stack_size(_DEEP_STACK_BYTES)
    sys.setrecursionlimit(max(limit, _DEEP_RECURSION))
    try:
        thread = threading.Thread(target=work, name="tracejit-pickle")
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(stack)
    return result[0]


def loads(data: bytes):
    return pickle.loads(data)  # checksummed bytes that this tracejit wrote


__all__ = ["EXECUTABLE_FILE", "RUN_FILE", "dumps", "loads"]
