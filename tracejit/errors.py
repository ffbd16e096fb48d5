"""The exceptions tracejit raises. Every one derives from `TracejitError`.

Messages name the user's argument and source line where they come from traced code, and say
what to do instead.
"""

from __future__ import annotations


class TracejitError(Exception):
    """Base class of every error tracejit raises on purpose."""


class ConcretizationError(TracejitError):
    """A traced value was used where Python needs a concrete value (bool, int, index...)."""


class TracerLeakError(TracejitError):
    """A tracer escaped the function being traced and was used after its trace ended."""


class ShapeError(TracejitError, ValueError):
    """Operand shapes do not fit the operation."""


class UnsupportedError(TracejitError, NotImplementedError):
    """An operation, argument or NumPy function tracejit does not support."""


class ImmutableArrayError(UnsupportedError, TypeError):
    """Item assignment into a traced array (`x[i] = v`); use `x = x.at[i].set(v)`."""


class CustomRuleClosureError(UnsupportedError):
    """A custom_vjp/custom_jvp rule closes over a traced value it cannot be given (pass it
    as an argument, or read it in the function itself)."""


class CompileError(TracejitError):
    """The backend compiler failed; the message holds its output and the kept source path."""


class DeviceError(TracejitError):
    """A device is unavailable or arrays from different devices were mixed."""


class DonatedArgumentError(TracejitError):
    """An array given up through `donate_argnums` was passed to a jitted function again."""


class BatchingError(TracejitError, NotImplementedError):
    """`vmap` met a primitive without a batching rule, or axes that do not fit."""


class CacheError(TracejitError):
    """The persistent compile cache could not be used."""


class ArgumentError(TracejitError, TypeError, ValueError):
    """A jitted function was given (or returned) what it cannot take: a non-array or an
    ndarray subclass, a bad static_argnums/static_argnames, a NaN static argument."""


class DistributedError(TracejitError):
    """A multi-process collective failed: an unbound axis name, shapes that differ between
    processes, a missing MPI installation, or a peer that did not answer in time."""


class IntegerOverflowError(TracejitError, OverflowError):
    """A Python int does not fit the integer dtype it is used as (NumPy raises too)."""


__all__ = [
    "ArgumentError",
    "BatchingError",
    "CacheError",
    "CompileError",
    "ConcretizationError",
    "CustomRuleClosureError",
    "DeviceError",
    "DistributedError",
    "DonatedArgumentError",
    "ImmutableArrayError",
    "IntegerOverflowError",
    "ShapeError",
    "TracejitError",
    "TracerLeakError",
    "UnsupportedError",
]
