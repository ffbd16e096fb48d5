"""`cond`, `switch` and `select_n`, with the names and semantics of `jax.lax`.

`cond`/`switch` trace every branch into a region of one `cond` node: only the chosen branch
runs. Each branch may close over different outer values; the node takes all of them (each
branch ignores the ones it does not read), so every branch has the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import ShapeError
from tracejit.ir.graph import Graph, Value
from tracejit.ir.regions import Region, aval_str
from tracejit.pytree import tree_flatten, tree_unflatten
from tracejit.tracer.core import bind

from ._trace import check_same_types, leaf_aval, out_avals, scalar_index, trace_region


def _shared_inputs(traced: list) -> tuple[list, list[Graph]]:
    """All branches' captured values (first seen first) and each branch graph taking them all."""
    consts: list = []
    index: dict[int, int] = {}
    for t in traced:
        for c in t.consts:
            if id(c) not in index:
                index[id(c)] = len(consts)
                consts.append(c)
    graphs = []
    for t in traced:
        own = dict(zip((id(c) for c in t.consts), t.graph.inputs))
        shared = [own[id(c)] if id(c) in own else Value(c.shape, c.dtype, c.weak) for c in consts]
        explicit = t.graph.inputs[len(t.consts) :]
        graphs.append(Graph(shared + explicit, list(t.graph.nodes), list(t.graph.outputs)))
    return consts, graphs


def _cond_flat(index, branches: Sequence[Callable], operands: tuple, what: str, names=None):
    leaves, tree = tree_flatten(operands)
    avals = [leaf_aval(x, f"{what} operand {i}") for i, x in enumerate(leaves)]
    names = names or [f"branch {k}" for k in range(len(branches))]
    traced = [trace_region(br, tree, avals, f"{what} {n}") for br, n in zip(branches, names)]
    first = traced[0]
    for k, t in enumerate(traced[1:], start=1):
        check_same_types(
            what,
            t.out_tree,
            out_avals(t.graph),
            first.out_tree,
            out_avals(first.graph),
            (f"output of {names[k]}", f"output of {names[0]}"),
            "out",
        )
    consts, graphs = _shared_inputs(traced)
    regions = tuple(Region(g) for g in graphs)
    outs = bind("cond", index, *consts, *leaves, branches=regions)
    return tree_unflatten(first.out_tree, list(outs))


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`; like `jax.lax.cond`.

    `pred` is a boolean (or integer: nonzero is true) scalar. Both branches are traced and
    must return the same structure, shapes and dtypes; only the chosen one runs.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> lax.cond(np.bool_(True), lambda x: x + 1.0, lambda x: x - 1.0, np.zeros(2))
    array([1., 1.])
    """
    shape, dtype, _ = leaf_aval(pred, "cond predicate")
    if tuple(shape) != () or np.dtype(dtype).kind not in "bi":
        raise ShapeError(
            f"cond: the predicate must be a boolean scalar, got {aval_str((shape, dtype, 0))}; "
            "reduce it (e.g. tnp.any) or compare it (x > 0) first"
        )
    if np.dtype(dtype).kind == "i":
        pred = pred != 0
    index = scalar_index(pred, "cond predicate")
    return _cond_flat(index, (false_fun, true_fun), operands, "cond", ["false_fun", "true_fun"])


def switch(index, branches: Sequence[Callable], *operands):
    """`branches[index](*operands)`, `index` clamped to the valid range; like `jax.lax.switch`.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> lax.switch(5, [lambda x: x, lambda x: 2.0 * x], np.ones(2))
    array([2., 2.])
    """
    branches = tuple(branches)
    if not branches or not all(callable(b) for b in branches):
        raise ShapeError("switch: branches must be a non-empty sequence of functions")
    shape, dtype, _ = leaf_aval(index, "switch index")
    if tuple(shape) != () or np.dtype(dtype).kind != "i":
        raise ShapeError(
            f"switch: the index must be an integer scalar, got {aval_str((shape, dtype, 0))}"
        )
    if len(branches) == 1:
        return branches[0](*operands)
    return _cond_flat(scalar_index(index, "switch index"), branches, operands, "switch")


def select_n(which, *cases):
    """Elementwise `cases[which]`: `which` is bool (two cases) or integer; like `jax.lax.select_n`.

    `which` is a scalar or has the cases' shape; all cases have one shape and dtype.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> lax.select_n(np.array([True, False]), np.zeros(2), np.ones(2))
    array([1., 0.])
    """
    if not cases:
        raise ShapeError("select_n needs at least one case")
    avals = [leaf_aval(c, f"select_n case {i}") for i, c in enumerate(cases)]
    w_shape, w_dtype, _ = leaf_aval(which, "select_n which")
    for i, a in enumerate(avals[1:], start=1):
        if tuple(a[0]) != tuple(avals[0][0]) or np.dtype(a[1]) != np.dtype(avals[0][1]):
            raise ShapeError(
                f"select_n: case {i} has type {aval_str(a)}, case 0 has {aval_str(avals[0])}"
            )
    if tuple(w_shape) not in ((), tuple(avals[0][0])):
        raise ShapeError(
            f"select_n: which has shape {tuple(w_shape)}; it must be a scalar or have the "
            f"cases' shape {tuple(avals[0][0])}"
        )
    kind = np.dtype(w_dtype).kind
    if kind == "b" and len(cases) > 2:
        raise ShapeError(f"select_n: a boolean which selects between 2 cases, got {len(cases)}")
    if kind not in "bi":
        raise ShapeError(f"select_n: which must be bool or integer, got {np.dtype(w_dtype)}")
    if len(cases) == 1:
        return cases[0]
    if kind == "b":
        return _select(which, cases[1], cases[0])
    out = cases[0]
    for k in range(1, len(cases)):
        out = _select(tnp.equal(which, k), cases[k], out)
    return out


def _select(pred, on_true, on_false):
    shape = tuple(np.shape(on_true)) if not hasattr(on_true, "shape") else on_true.shape
    if tuple(pred.shape if hasattr(pred, "shape") else np.shape(pred)) != tuple(shape):
        pred = bind("broadcast_in_dim", pred, shape=tuple(shape), dims=())
    return bind("select", pred, on_true, on_false)


__all__ = ["cond", "select_n", "switch"]
