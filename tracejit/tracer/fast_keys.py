"""The keys of `jit`'s fast paths: a call looked up without abstractifying its arguments.

A key is the device, the static arguments' values (`StaticSplit`, when the function has
any), whether traced keyword arguments were passed, the traced arguments' optree structure
and, per leaf, `(shape, dtype)` for a host array, `(type, shape, dtype)` for a CuPy array
(jit's CUDA results included) or the type of any other leaf (positional plain arrays: the
device and the arrays' shapes and dtypes only). `Jitted._call` builds the key; the general
path stores a missed one only where it says everything that path's signature says
(structure, avals, static values, device):

- a host or CuPy array whose dtype is its own canonical one (its aval is `(shape, dtype,
  False)`; a CuPy array reaches the store only for device="cuda", where it passes as it is);
- a Python bool, int, float or complex (exactly these types: the aval is
  `((), dtype, True)`, the dtype `dtypes.python_scalar_dtype` gives), or a NumPy scalar of
  a supported dtype (`((), dtype, False)`): the aval depends on the type only.

Scalar leaves are converted as the general path converts them (`np.asarray(x, dtype)`);
a Python int is range-checked first, against int64 or the narrower dtype the graph
converts it to (`checks.weak_int_targets`): out of range, the call takes the general path,
which raises the same `IntegerOverflowError` as before.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from tracejit.const_array import ConstArray
from tracejit.errors import IntegerOverflowError
from tracejit.ir import dtypes

# Host arrays the fast paths pass as they are: NumPy's, and the ConstArray views jit returns.
HOST = (np.ndarray, ConstArray)
_PYTHON_SCALARS = (bool, int, float, complex)
_NUMPY_SCALARS = frozenset(dt.type for dt in dtypes.SUPPORTED)


_DEVICE_TYPES: dict[type, bool] = {}


def device_type(t: type) -> bool:
    """Whether `t` is CuPy's ndarray or a subclass (every instance a CUDA array; a torch
    tensor's type says nothing of its device, so it is not one)."""
    known = _DEVICE_TYPES.get(t)
    if known is None:
        cupy = sys.modules.get("cupy")
        array = getattr(cupy, "ndarray", None)
        known = _DEVICE_TYPES[t] = isinstance(array, type) and issubclass(t, array)
    return known


def leaf_key(head: list, leaves: list) -> tuple:
    """`head`, then per leaf `(shape, dtype)` for a host array, `(type, shape, dtype)` for a
    CuPy array and the type of any other: a `Jitted._fast` key (one `store_plan`
    accepted, or one never stored)."""
    for x in leaves:
        t = type(x)
        if t is np.ndarray or t is ConstArray:
            head.append((x.shape, x.dtype))
        elif device_type(t):
            head.append((t, x.shape, x.dtype))
        else:
            head.append(t)
    return tuple(head)


def store_plan(leaves: list, avals: tuple, int_targets: list) -> tuple | None:
    """How a fast call converts its leaves: `(index, dtype, int bounds or None)` per scalar
    leaf; None when a leaf's key would not determine its aval (the call is not keyed).
    `int_targets`: (leaf index, narrower integer dtype) pairs of the general path."""
    narrow = dict(int_targets)
    plan = []
    for i, (x, (_, dtype, _)) in enumerate(zip(leaves, avals)):
        t = type(x)
        if t in HOST or device_type(t):
            if x.dtype != dtype:
                return None
        elif t in _PYTHON_SCALARS or (t in _NUMPY_SCALARS and x.dtype == dtype):
            bounds = None
            if t is int:
                info = np.iinfo(narrow.get(i, dtype))
                bounds = (int(info.min), int(info.max))
            plan.append((i, dtype, bounds))
        else:
            return None
    return tuple(plan)


class OutOfRange(IntegerOverflowError):
    """A fast call's Python int is out of range; never escapes: the general path raises
    the error naming the argument."""


def converting(executable, plan: tuple):
    """`executable`, taking the leaves of a fast call: scalars converted as `plan` says
    (0-d arrays), Python ints range-checked first (`OutOfRange`)."""

    def run(leaves: list) -> list:  # (a list of the caller's own: converted in place)
        for i, dtype, bounds in plan:
            x = leaves[i]
            if bounds is not None and not bounds[0] <= x <= bounds[1]:
                raise OutOfRange
            leaves[i] = np.asarray(x, dtype=dtype)
        return executable(leaves)

    return run


class StaticSplit:
    """Splits a call of a function with static arguments as `ArgSpec.split` does, cheaply:
    `(static key, traced positional tuple, traced keyword dict or None when empty)`.

    The key holds the number of positional arguments, the static positional values (one
    value or a tuple, per that number) and the static keyword (name, value) pairs in the
    call's order: a key says `ArgSpec.split`'s `static` (calls passing keywords in two
    orders get two keys, for one signature)."""

    def __init__(self, static_argnums: set[int], static_argnames: set[str]):
        self.nums = static_argnums
        self.names = static_argnames
        self.getters: dict[int, tuple] = {}  # positional count -> (static, traced) getters

    def __call__(self, args: tuple, kwargs: dict) -> tuple[tuple, tuple, dict | None]:
        n = len(args)
        get = self.getters.get(n)
        if get is None:
            static = [i for i in sorted(self.nums) if i < n]
            traced = [i for i in range(n) if i not in self.nums]
            get = self.getters[n] = (_getter(static, False), _getter(traced, True))
        if not kwargs:
            return (n, get[0](args)), get[1](args), None
        names = self.names
        static_kw = tuple([(k, v) for k, v in kwargs.items() if k in names])
        traced_kw = None
        if len(static_kw) < len(kwargs):
            traced_kw = {k: v for k, v in kwargs.items() if k not in names}
        return (n, get[0](args), static_kw), get[1](args), traced_kw


def _getter(indices: list[int], as_tuple: bool):
    """The items of a tuple at `indices`: a tuple (one item alone unless `as_tuple`)."""
    if len(indices) > 1 or (indices and not as_tuple):
        return operator.itemgetter(*indices)
    if indices:
        i = indices[0]
        return lambda args: (args[i],)
    return lambda args: ()


__all__ = ["HOST", "OutOfRange", "StaticSplit", "converting", "leaf_key", "store_plan"]
