"""The arguments of a traced call: abstract values of leaves, static arguments, leaf names.

`ArgSpec` says which positional and keyword arguments of a function are static (hashed into
the signature, passed as they are) and which are traced (flattened to array leaves). `jit`
and every transformation split a call with it the same way.

>>> import numpy as np
>>> spec = ArgSpec(lambda x, n: x * n, static_argnums=(1,))
>>> call = spec.split((np.ones(2), 3), {})
>>> call.static, spec.leaf_names(call)
(((1, 3),), ['x'])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tracejit.errors import ArgumentError
from tracejit.ir import dtypes
from tracejit.pytree import keystr_paths, tree_flatten
from tracejit.tracer import checks
from tracejit.tracer.core import Tracer
from tracejit.tracer.jit_options import ShapeDtypeStruct


def abstractify(x, name: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """(shape, dtype, weak) of one argument leaf, or a clear error for a non-array."""
    if isinstance(x, Tracer):
        return x.shape, x.dtype, x.weak
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        dtype = dtypes.python_scalar_dtype(x)
        checks.check_int_fits(x, dtype, f"argument {name}")
        return (), dtype, True
    checks.reject_subclass(x, f"argument {name}")
    if isinstance(x, (np.ndarray, np.generic)):
        return x.shape, dtypes.canonical(x.dtype), False
    if hasattr(x, "__cuda_array_interface__"):
        return tuple(x.shape), dtypes.canonical(x.dtype), False
    if isinstance(x, ShapeDtypeStruct):
        return x.shape, dtypes.canonical(x.dtype), False
    raise ArgumentError(
        f"argument {name} of type {type(x).__name__} is not an array or a Python scalar; "
        "pass arrays, or mark the argument static with static_argnums/static_argnames"
    )


def as_tuple(x) -> tuple:
    """`static_argnums=1`, `("a", "b")` or None as a tuple."""
    if x is None:
        return ()
    return (x,) if isinstance(x, (int, str)) else tuple(x)


@dataclass
class SplitCall:
    """One call split by an `ArgSpec`: the traced part and the static part."""

    args: tuple  # every positional argument, as given
    dynamic: tuple  # (positional traced arguments, {name: traced keyword argument})
    static: tuple  # ((position or name, value), ...): hashable, part of the signature
    rebuild: Callable  # tree of traced leaves -> (full args list, full kwargs dict)


class ArgSpec:
    """Which arguments of `fun` are static; splits calls and names their traced leaves."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(), label: str = ""):
        self.static_argnums = set(as_tuple(static_argnums))
        self.static_argnames = set(as_tuple(static_argnames))
        checks.check_static_spec(fun, self.static_argnums, self.static_argnames, label)
        try:
            self.params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            self.params = []
        for name in list(self.static_argnames):  # a static name passed positionally
            if name in self.params:
                self.static_argnums.add(self.params.index(name))

    def split(self, args: tuple, kwargs: dict) -> SplitCall:
        nums, names = self.static_argnums, self.static_argnames
        static = tuple((i, args[i]) for i in sorted(nums) if i < len(args))
        static += tuple(sorted((k, v) for k, v in kwargs.items() if k in names))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
        for where, v in static:
            checks.check_static_value(self.static_name(where), v)
            try:
                hash(v)
            except TypeError:
                raise ArgumentError(
                    f"static argument of type {type(v).__name__} must be hashable "
                    f"({_hashable_hint(v)})"
                ) from None
        static_kwargs = dict(s for s in static if isinstance(s[0], str))

        def rebuild(tree):
            dyn_a, dyn_k = tree
            it = iter(dyn_a)
            full = [args[i] if i in nums else next(it) for i in range(len(args))]
            return full, {**static_kwargs, **dyn_k}

        return SplitCall(tuple(args), (dyn_args, dyn_kwargs), static, rebuild)

    def static_name(self, where) -> str:
        if isinstance(where, str):
            return where
        return self.params[where] if where < len(self.params) else f"args[{where}]"

    def leaf_names(self, call: SplitCall) -> list[str]:
        """The user's name of each traced leaf (`params['w']`, `args[2][0]`, ...)."""
        dyn_args, dyn_kwargs = call.dynamic
        positions = [i for i in range(len(call.args)) if i not in self.static_argnums]
        names = []
        for pos, a in zip(positions, dyn_args):
            base = self.params[pos] if pos < len(self.params) else f"args[{pos}]"
            names += keystr_paths(tree_flatten(a)[1], base)
        for k in sorted(dyn_kwargs):
            names += keystr_paths(tree_flatten(dyn_kwargs[k])[1], k)
        return names


def _hashable_hint(v) -> str:
    if isinstance(v, (np.ndarray, np.generic)) or hasattr(v, "__cuda_array_interface__"):
        return "an array is not hashable: pass it as a traced argument, or as a tuple of values"
    instead = {list: "a tuple", set: "a frozenset", dict: "a tuple of (key, value) pairs"}
    if type(v) in instead:
        return f"use {instead[type(v)]} instead of a {type(v).__name__}"
    return "make it hashable, e.g. a tuple or a frozen dataclass"


__all__ = ["ArgSpec", "SplitCall", "abstractify", "as_tuple"]
