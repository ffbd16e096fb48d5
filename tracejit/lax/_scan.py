"""`scan` and `map`, with the names and semantics of `jax.lax.scan` / `jax.lax.map`."""

from __future__ import annotations

from collections.abc import Callable

from tracejit import numpy as tnp
from tracejit.batching import vmap
from tracejit.errors import ShapeError
from tracejit.ir.regions import Region
from tracejit.pytree import tree_flatten, tree_unflatten
from tracejit.tracer.core import bind

from ._trace import (
    cast_leaves,
    check_same_types,
    leaf_aval,
    out_avals,
    promote_weak,
    trace_region,
)
from ._unroll import scan_unrolled


def _scan_length(x_leaves: list, length) -> int:
    avals = [leaf_aval(x, f"xs leaf {i}") for i, x in enumerate(x_leaves)]
    for i, (shape, _, _) in enumerate(avals):
        if not shape:
            raise ShapeError(f"scan: xs leaf {i} is a scalar; every xs leaf needs a leading axis")
    lengths = sorted({a[0][0] for a in avals})
    if length is not None:
        if not isinstance(length, int) or isinstance(length, bool) or length < 0:
            raise ShapeError(f"scan: length must be a non-negative int, got {length!r}")
        if lengths and lengths != [length]:
            raise ShapeError(f"scan: length={length} but the xs leading axes are {lengths}")
        return length
    if not lengths:
        raise ShapeError("scan: with no xs, pass length= to say how many iterations to run")
    if len(lengths) > 1:
        raise ShapeError(f"scan: the xs leaves have different leading axis sizes {lengths}")
    return lengths[0]


def scan_flat(f, init_leaves, init_tree, x_leaves, x_tree, length: int, reverse: bool):
    """One `scan` node; returns (final carry leaves, ys leaves, ys tree)."""
    carry_avals = [leaf_aval(c, f"init leaf {i}") for i, c in enumerate(init_leaves)]
    x_avals = [(tuple(s[1:]), d, w) for s, d, w in (leaf_aval(x, "xs") for x in x_leaves)]
    n_carry = len(init_leaves)

    def body(*leaves):
        out = f(
            tree_unflatten(init_tree, leaves[:n_carry]), tree_unflatten(x_tree, leaves[n_carry:])
        )
        if not isinstance(out, tuple) or len(out) != 2:
            raise ShapeError(
                f"scan: the body must return a pair (new_carry, y), got {type(out).__name__}"
            )
        return out

    in_tree = tree_flatten((tuple(init_leaves), tuple(x_leaves)))[1]
    flat = lambda carry, xs: body(*carry, *xs)
    for _ in range(2):  # a second trace only when weak initial values must be promoted
        traced = trace_region(flat, in_tree, carry_avals + x_avals, "scan body")
        carry_tree = traced.out_tree.children()[0]
        got = out_avals(traced.graph, 0, carry_tree.num_leaves)
        promoted = promote_weak(carry_avals, got) if carry_tree == init_tree else None
        if promoted is None:
            break
        carry_avals = promoted
        init_leaves = cast_leaves(init_leaves, carry_avals)
    check_same_types(
        "scan body",
        carry_tree,
        got,
        init_tree,
        carry_avals,
        ("carry output", "carry input"),
        "carry",
    )
    init_leaves = cast_leaves(init_leaves, carry_avals)
    outs = bind(
        "scan",
        *traced.consts,
        *init_leaves,
        *x_leaves,
        body=Region(traced.graph),
        length=length,
        reverse=bool(reverse),
        n_consts=len(traced.consts),
        n_carry=n_carry,
    )
    return list(outs[:n_carry]), list(outs[n_carry:]), traced.out_tree.children()[1]


def scan(
    f: Callable,
    init,
    xs=None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
):
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`; like `jax.lax.scan`.

    Returns `(final carry, stacked ys)`. The loop is one IR node whose body is traced once:
    compiled, it runs as a loop (not unrolled), and it is differentiable in both modes.
    `unroll=k` runs `k` iterations per loop trip (True: the whole loop unrolled).

    >>> import numpy as np
    >>> from tracejit import lax
    >>> c, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, np.arange(1.0, 4.0))
    >>> float(c), ys
    (6.0, array([0., 2., 9.]))
    """
    if isinstance(unroll, bool):
        unroll_k = None if unroll else 1
    elif isinstance(unroll, int) and unroll >= 1:
        unroll_k = unroll
    else:
        raise ShapeError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    init_leaves, init_tree = tree_flatten(init)
    x_leaves, x_tree = tree_flatten(xs)
    n = _scan_length(x_leaves, length)
    k = n if unroll_k is None else unroll_k
    if k > 1 and n > 1:
        carry, ys, y_tree = scan_unrolled(
            scan_flat, f, init_leaves, init_tree, x_leaves, x_tree, n, bool(reverse), k
        )
    else:
        carry, ys, y_tree = scan_flat(f, init_leaves, init_tree, x_leaves, x_tree, n, reverse)
    return tree_unflatten(init_tree, carry), tree_unflatten(y_tree, ys)


def map(f: Callable, xs, *, batch_size: int | None = None):
    """`f` applied to each slice of `xs` along its leading axis, results stacked (a scan).

    With `batch_size`, each loop trip applies `vmap(f)` to `batch_size` slices at once (the
    leftover slices in one more batch), as `jax.lax.map` does.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> lax.map(lambda x: x * 2.0, np.arange(3.0))
    array([0., 2., 4.])
    """
    if batch_size is None:
        _, ys = scan(lambda c, x: (c, f(x)), None, xs)
        return ys
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ShapeError(f"map: batch_size must be a positive int, got {batch_size!r}")
    return _batched_map(f, xs, batch_size)


def _batched_map(f: Callable, xs, batch_size: int):
    leaves, tree = tree_flatten(xs)
    n = _scan_length(leaves, None)
    b = max(1, min(batch_size, n))
    blocks, rest = divmod(n, b)
    parts = []
    if blocks:
        main = [tnp.reshape(x[: blocks * b], (blocks, b) + tuple(x.shape[1:])) for x in leaves]
        _, ys = scan(lambda c, xb: (c, vmap(f)(xb)), None, tree_unflatten(tree, main))
        y_leaves, y_tree = tree_flatten(ys)
        parts.append([tnp.reshape(y, (blocks * b,) + tuple(y.shape[2:])) for y in y_leaves])
    if rest:
        tail = vmap(f)(tree_unflatten(tree, [x[blocks * b :] for x in leaves]))
        y_leaves, y_tree = tree_flatten(tail)
        parts.append(y_leaves)
    if len(parts) == 1:
        return tree_unflatten(y_tree, parts[0])
    return tree_unflatten(y_tree, [tnp.concatenate(p, axis=0) for p in zip(*parts)])


__all__ = ["map", "scan", "scan_flat"]
