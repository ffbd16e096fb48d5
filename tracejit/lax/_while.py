"""`while_loop` and `fori_loop`, with the names and semantics of `jax.lax`.

`fori_loop` with concrete (Python or NumPy integer) bounds is a `scan` over the iteration
index, so it is reverse-differentiable; with traced bounds it is a `while_loop`, which is
not (as in JAX).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tracejit.errors import ShapeError
from tracejit.ir.regions import Region, aval_str
from tracejit.pytree import tree_flatten, tree_unflatten
from tracejit.tracer.core import Tracer, bind

from ._scan import scan
from ._trace import (
    cast_leaves,
    check_same_types,
    leaf_aval,
    out_avals,
    promote_weak,
    trace_region,
)


def _trace_cond(cond_fun, tree, avals):
    traced = trace_region(cond_fun, tree, avals, "while_loop cond_fun")
    got = out_avals(traced.graph)
    if traced.out_tree.node_data() is not None or len(got) != 1 or got[0][:2] != ((), np.bool_):
        shown = ", ".join(aval_str(a) for a in got)
        raise ShapeError(
            f"while_loop: cond_fun must return a boolean scalar, got {traced.out_tree} of "
            f"({shown}); compare or reduce it (e.g. tnp.all(x > 0))"
        )
    return traced


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """`val = body_fun(val)` while `cond_fun(val)`; returns the final `val` (`jax.lax.while_loop`).

    Reverse-mode differentiation through a while loop raises UnsupportedError: the trip count
    is unknown, so use `scan` or `fori_loop` with static bounds instead.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> int(lax.while_loop(lambda i: i < 10, lambda i: i * 2, np.int64(1)))
    16
    """
    leaves, tree = tree_flatten(init_val)
    arg_tree = tree_flatten((init_val,))[1]
    avals = [leaf_aval(x, f"init_val leaf {i}") for i, x in enumerate(leaves)]
    for _ in range(2):  # retrace once when a weak initial value meets a stronger dtype
        body = trace_region(body_fun, arg_tree, avals, "while_loop body_fun")
        got = out_avals(body.graph)
        promoted = promote_weak(avals, got) if body.out_tree == tree else None
        if promoted is None:
            break
        avals = promoted
    check_same_types(
        "while_loop body_fun", body.out_tree, got, tree, avals, ("output", "input"), "val"
    )
    cond = _trace_cond(cond_fun, arg_tree, avals)
    leaves = cast_leaves(leaves, avals)
    outs = bind(
        "while_loop",
        *cond.consts,
        *body.consts,
        *leaves,
        cond=Region(cond.graph),
        body=Region(body.graph),
        n_cond_consts=len(cond.consts),
    )
    return tree_unflatten(tree, list(outs))


def _concrete_int(x) -> int | None:
    if isinstance(x, Tracer):
        return None
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind == "i":
        return int(x)
    raise ShapeError(f"fori_loop: bounds must be integers, got {type(x).__name__} {x!r}")


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll: int | bool = 1):
    """`val = body_fun(i, val)` for `i` in `range(lower, upper)`; like `jax.lax.fori_loop`.

    With concrete bounds this is a `scan` (differentiable in reverse mode, and `unroll`
    applies); with traced bounds, a `while_loop`.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> float(lax.fori_loop(0, 4, lambda i, x: x + i, 0.5))
    6.5
    """
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        index = np.arange(lo, max(lo, hi), dtype=np.int64)
        val, _ = scan(lambda v, i: (body_fun(_weak(i), v), None), init_val, index, unroll=unroll)
        return val

    def cond_fun(state):
        i, stop, _ = state
        return i < stop

    def step(state):
        i, stop, val = state
        return i + 1, stop, body_fun(i, val)

    i0, stop0 = _as_index(lower), _as_index(upper)
    return while_loop(cond_fun, step, (i0, stop0, init_val))[2]


def _weak(i):
    """The loop index as a weak integer, like the Python int of the equivalent `for` loop."""
    return bind("convert", i, dtype=np.dtype(np.int64), weak=True)


def _as_index(x):
    if isinstance(x, Tracer):
        if x.shape != () or x.dtype.kind != "i":
            raise ShapeError(f"fori_loop: bounds must be integer scalars, got {x._value.type_str}")
        return x if x.dtype == np.int64 else bind("convert", x, dtype=np.dtype(np.int64))
    return np.int64(_concrete_int(x))


__all__ = ["fori_loop", "while_loop"]
