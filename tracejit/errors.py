"""The exceptions tracejit raises. Every one derives from `TracejitError`, and from the
builtin class a user would catch for it (`TypeError`, `ValueError`, `IndexError`, ...).

Messages say what to do instead; each error carries the user's source line (the innermost
frame outside tracejit, NumPy and the standard library) as a PEP 678 note, added where it is
created, so re-raising never rebuilds it and its attributes stay.

>>> import tracejit as tj, tracejit.numpy as tnp
>>> try:
...     tnp.reshape(tnp.ones(6), (4, 2))
... except ValueError as err:  # also tj.errors.ShapeError and tj.errors.TracejitError
...     print(type(err).__name__, isinstance(err, tj.errors.TracejitError))
ShapeError True
"""

from __future__ import annotations

import os
import sys
import sysconfig

import numpy as np

# Frames in these are not the user's: tracejit, NumPy, the standard library (worker threads
# start there) but not the site-packages inside it.
_OURS = tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (__file__, np.__file__))
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
_SITE = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib")})


def _is_users(filename: str) -> bool:
    if filename.startswith(_OURS) or filename.startswith("<frozen"):
        return False
    return not filename.startswith(_STDLIB) or filename.startswith(_SITE)


# co_filename -> True (the user's), False (ours: skipped) or None (a doctest example: no
# source), decided once per file: user_frame runs for every traced operation.
_KIND_OF_FILE: dict[str, bool | None] = {}
_UNKNOWN = object()


def _file_kind(filename: str) -> bool | None:
    kind = None if filename.startswith("<doctest ") else _is_users(filename)
    _KIND_OF_FILE[filename] = kind
    return kind


def user_frame() -> str | None:
    """`file:line (function)` of the innermost frame outside tracejit, NumPy and the standard
    library; None when there is none (in a worker thread of tracejit) or it is a doctest
    example (whose expected traceback shows the message only)."""
    frame = sys._getframe(1)
    kinds = _KIND_OF_FILE
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        kind = kinds.get(filename, _UNKNOWN)
        if kind is _UNKNOWN:
            kind = _file_kind(filename)
        if kind:
            return f"{filename}:{frame.f_lineno} ({code.co_name})"
        if kind is None:
            return None
        frame = frame.f_back
    return None


class TracejitError(Exception):
    """Base class of every error tracejit raises on purpose.

    `source` is the user's `file:line (function)`, also shown as the note `at <source>`.
    """

    source: str | None = None

    def __init__(self, *args):
        super().__init__(*args)
        self.add_source(user_frame())

    def add_source(self, source: str | None) -> TracejitError:
        """Note the user's line once (the first one given wins); returns the error itself."""
        if source and self.source is None:
            self.source = source
            if source not in str(self):  # older messages name it already
                self.add_note(f"at {source}")
        return self


class ConcretizationError(TracejitError, TypeError):
    """A traced value was used where Python needs a concrete value (bool, int, index...); a
    TypeError, as JAX's ConcretizationTypeError."""


class TracerLeakError(TracejitError, RuntimeError):
    """A tracer escaped the function being traced and was used after its trace ended."""


class ShapeError(TracejitError, ValueError):
    """Operand shapes do not fit the operation."""


class AxisError(ShapeError, IndexError):
    """An axis out of range for the array's rank. A ShapeError (so a ValueError) and an
    IndexError, as NumPy's `np.exceptions.AxisError`: the Array API standard asks for an
    IndexError, code written for NumPy catches either."""


class UnsupportedError(TracejitError, NotImplementedError):
    """An operation, argument or NumPy function tracejit does not support."""


class ImmutableArrayError(UnsupportedError, TypeError):
    """Item assignment into a traced array (`x[i] = v`); use `x = x.at[i].set(v)`."""


class CustomRuleClosureError(UnsupportedError):
    """A custom_vjp/custom_jvp rule closes over a traced value it cannot be given (pass it
    as an argument, or read it in the function itself)."""


class CustomVJPForwardModeError(UnsupportedError):
    """Forward mode (jvp, jacfwd, linearize, hessian) through a custom_vjp whose bwd is not
    linear in the cotangent (it clips, rounds or quantizes it): transposing such a bwd is not
    the derivative. Define the function with custom_jvp, or use reverse mode."""


class CompileError(TracejitError, RuntimeError):
    """The backend compiler failed; the message holds its output and the kept source path."""


class DeviceError(TracejitError, RuntimeError):
    """A device is unavailable or arrays from different devices were mixed."""


class DonatedArgumentError(TracejitError, RuntimeError):
    """An array given up through `donate_argnums` was passed to a jitted function again."""


class BatchingError(TracejitError, NotImplementedError):
    """`vmap` met a primitive without a batching rule, or axes that do not fit."""


class CacheError(TracejitError, OSError):
    """The persistent compile cache could not be used (an OSError whose `errno` is None)."""


class ArgumentError(TracejitError, TypeError, ValueError):
    """A jitted function was given (or returned) what it cannot take: a non-array or an
    ndarray subclass, a bad static_argnums/static_argnames, a NaN static argument."""


class DistributedError(TracejitError, RuntimeError):
    """A multi-process collective failed: an unbound axis name, shapes that differ between
    processes, a missing MPI installation, or a peer that did not answer in time."""


class IntegerOverflowError(TracejitError, OverflowError):
    """A Python int does not fit the integer dtype it is used as (NumPy raises too)."""


class TracejitTypeError(TracejitError, TypeError):
    """A value of a type tracejit cannot use where it was given."""


class TracejitValueError(TracejitError, ValueError):
    """A value tracejit cannot use where it was given (an axis, a mode, a size...)."""


class TracejitIndexError(TracejitError, IndexError):
    """An index that does not fit the array or is not a valid index."""


class TracejitKeyError(TracejitError, KeyError):
    """A name missing from a tracejit table (a primitive without a rule of that kind)."""


class InternalError(TracejitError, AssertionError):
    """A bug in tracejit: an internal invariant failed. Please report it with the program."""


class TracejitAttributeError(TracejitError, AttributeError):
    """A name tracejit does not have (a setting, a NumPy name it does not offer)."""


__all__ = [
    "ArgumentError",
    "AxisError",
    "BatchingError",
    "CacheError",
    "CompileError",
    "ConcretizationError",
    "CustomRuleClosureError",
    "CustomVJPForwardModeError",
    "DeviceError",
    "DistributedError",
    "DonatedArgumentError",
    "ImmutableArrayError",
    "IntegerOverflowError",
    "InternalError",
    "ShapeError",
    "TracejitAttributeError",
    "TracejitError",
    "TracejitIndexError",
    "TracejitKeyError",
    "TracejitTypeError",
    "TracejitValueError",
    "TracerLeakError",
    "UnsupportedError",
]
