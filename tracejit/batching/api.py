"""`tj.vmap`: map a function over a batch axis of its arguments, as one batched program.

`vmap(f)` traces `f` for one example (the arguments with their batch axis removed), batches
the traced graph with `batch_graph`, and runs it like `grad` runs its joint graph: eagerly
on arrays, or recorded into an enclosing trace, so `jit(vmap(f))` compiles one program and
`vmap(grad(f))`, `grad(vmap(f))` and `vmap(vmap(f))` compose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracejit.batching.interpreter import batch_graph
from tracejit.errors import BatchingError, TracejitTypeError, TracejitValueError
from tracejit.pytree import PyTreeDef, tree_flatten, tree_unflatten
from tracejit.tracer.arguments import abstractify
from tracejit.tracer.tracing import Traced, inline, trace_flat

AxisSpec = Any  # int | None | a pytree prefix of ints and Nones


def _is_axis(x) -> bool:
    return x is None or (isinstance(x, int) and not isinstance(x, bool))


def broadcast_prefix(spec: AxisSpec, full: PyTreeDef, what: str) -> list:
    """One axis per leaf of `full`, from `spec`, a pytree prefix of `full` (JAX's rule)."""
    leaves, spec_def = tree_flatten(spec, is_leaf=_is_axis)
    for leaf in leaves:
        if not _is_axis(leaf):
            raise TracejitTypeError(f"vmap: {what} must hold ints or None, got {leaf!r}")
    it = iter(leaves)
    out: list = []

    def go(s: PyTreeDef, f: PyTreeDef):
        if s.node_data() is None:
            out.extend([next(it)] * f.num_leaves)
            return
        if s.node_data() != f.node_data() or len(s.children()) != len(f.children()):
            raise TracejitValueError(f"vmap: {what} {spec!r} is not a prefix of the structure {f}")
        for sc, fc in zip(s.children(), f.children()):
            go(sc, fc)

    go(spec_def, full)
    return out


def _normalize(axis: int | None, ndim: int, what: str) -> int | None:
    if axis is None:
        return None
    if not -ndim <= axis < ndim:
        raise TracejitValueError(
            f"vmap: {what} = {axis} is out of range for an array of rank {ndim}"
        )
    return axis % ndim


class _Vmapped:
    """The function `vmap` returns; traces per per-example signature, batches per axes."""

    def __init__(self, fun: Callable, in_axes, out_axes, axis_size: int | None):
        if not callable(fun):
            raise TracejitTypeError(f"vmap expects a function, got {type(fun).__name__}")
        self.fun = fun
        self.in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self.out_axes = out_axes
        self.axis_size = axis_size
        self.__name__ = f"vmap({getattr(fun, '__name__', 'function')})"
        self._cache: dict[tuple, tuple[Traced, Any]] = {}

    def __call__(self, *args, **kwargs):
        leaves, treedef = tree_flatten((args, kwargs))
        axes = self._leaf_axes(args, kwargs)
        avals, in_dims, size = self._example_avals(leaves, axes)
        key = (treedef, tuple(avals), tuple(in_dims), size)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._build(treedef, avals, in_dims, size)
            if not hit[0].captured:  # a graph reading outer tracers is valid for this call only
                self._cache[key] = hit
        traced, batched = hit
        outs = inline(batched, list(leaves) + traced.captured)
        return tree_unflatten(traced.out_tree, outs)

    def _leaf_axes(self, args, kwargs) -> list:
        if isinstance(self.in_axes, tuple) and len(self.in_axes) != len(args):
            raise TracejitValueError(
                f"vmap: in_axes has {len(self.in_axes)} entries but the call passed "
                f"{len(args)} positional argument(s); give one entry per argument"
            )
        arg_axes = self.in_axes if isinstance(self.in_axes, tuple) else (self.in_axes,) * len(args)
        spec = (tuple(arg_axes), {k: 0 for k in kwargs})  # keyword arguments map over axis 0
        return broadcast_prefix(spec, tree_flatten((args, kwargs))[1], "in_axes")

    def _example_avals(self, leaves, axes):
        avals, dims, sizes = [], [], {}
        for i, (x, axis) in enumerate(zip(leaves, axes)):
            shape, dtype, weak = abstractify(x, f"leaf {i}")
            d = _normalize(axis, len(shape), f"in_axes of argument leaf {i}")
            if d is not None:
                sizes.setdefault(shape[d], i)
                shape = shape[:d] + shape[d + 1 :]
            avals.append((shape, dtype, weak))
            dims.append(d)
        if len(sizes) > 1:
            found = ", ".join(f"{n} (leaf {i})" for n, i in sizes.items())
            raise BatchingError(f"vmap: the mapped axes have different sizes: {found}")
        if sizes:
            size = next(iter(sizes))
            if self.axis_size is not None and self.axis_size != size:
                raise BatchingError(f"vmap: axis_size={self.axis_size} but the axes have {size}")
        elif self.axis_size is None:
            raise BatchingError(
                "vmap: no argument is mapped (every in_axes is None); pass axis_size"
            )
        else:
            size = int(self.axis_size)
        return avals, dims, size

    def _build(self, treedef, avals, in_dims, size):
        names = [f"leaf {i}" for i in range(len(avals))]

        def rebuild(tree):
            return tree

        traced = trace_flat(self.fun, rebuild, treedef, avals, names, self.__name__)
        out_dims = [
            _normalize(a, len(v.shape) + 1, "out_axes")
            for a, v in zip(
                broadcast_prefix(self.out_axes, traced.out_tree, "out_axes"), traced.graph.outputs
            )
        ]
        dims = list(in_dims) + [None] * len(traced.captured)
        return traced, batch_graph(traced.graph, dims, size, out_dims)


def vmap(fun: Callable, in_axes: AxisSpec = 0, out_axes: AxisSpec = 0, axis_size=None):
    """Vectorize `fun` over axis `in_axes` of its arguments; results stack along `out_axes`.

    `in_axes`: an int or None for every argument, or a tuple with one entry per positional
    argument, each an int, None (not mapped) or a pytree prefix of that argument. Keyword
    arguments are mapped over axis 0. `out_axes` is a pytree prefix of the output.

    >>> import numpy as np, tracejit as tj
    >>> tj.vmap(lambda x, w: x @ w, in_axes=(0, None))(np.ones((3, 2)), np.ones(2))
    array([2., 2., 2.])
    """
    return _Vmapped(fun, in_axes, out_axes, axis_size)


__all__ = ["broadcast_prefix", "vmap"]
