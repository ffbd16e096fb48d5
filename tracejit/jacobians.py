"""Forward mode and Jacobians: `jvp`, `linearize`, `jacfwd`, `jacrev`, `hessian`.

Forward mode is reverse mode transposed (the double-VJP trick): the pullback is linear in
its cotangent, and the VJP of a linear map is its transpose, the JVP. Jacobians push a whole
basis through the linear map at once with `vmap`, so a Jacobian is one batched program, not
one program per row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tracejit.batching import vmap
from tracejit.ir import dtypes
from tracejit.pytree import tree_flatten, tree_unflatten
from tracejit.tracer.core import Tracer, bind
from tracejit.transforms import _normalize_argnums, _owned, vjp


def _shape(x) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tracer) else tuple(np.shape(x))


def _dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype


def _zeros_like(x):
    return np.zeros(_shape(x), dtype=_dtype(x))


def linearize(fun: Callable, *primals) -> tuple[Any, Callable]:
    """`(fun(*primals), f_jvp)`: `f_jvp(*tangents)` is the JVP at `primals`, reusing one
    forward evaluation for every tangent.

    >>> import numpy as np, tracejit as tj
    >>> out, f_jvp = tj.linearize(np.sin, np.zeros(2))
    >>> f_jvp(np.array([1.0, 2.0]))
    array([1., 2.])
    """
    out, f_vjp = vjp(fun, *primals)
    out_leaves, out_tree = tree_flatten(out)
    for leaf in out_leaves:
        if not dtypes.is_float(_dtype(leaf)):
            raise TypeError(f"jvp: an output of dtype {_dtype(leaf)} has no tangent; return floats")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    ct0 = tree_unflatten(out_tree, [_zeros_like(o) for o in out_leaves])
    _, transpose = vjp(f_vjp, ct0)

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != p_tree:
            raise TypeError(f"jvp: tangents {t_tree} do not match primals {p_tree}")
        for p, t in zip(p_leaves, t_leaves):
            if _shape(p) != _shape(t):
                raise ValueError(f"jvp: tangent shape {_shape(t)} differs from {_shape(p)}")
        (tangent_out,) = transpose(tuple(tangents))
        return tangent_out

    return out, f_jvp


def jvp(fun: Callable, primals: Sequence, tangents: Sequence) -> tuple[Any, Any]:
    """Forward mode: `(fun(*primals), d fun(primals)[tangents])`.

    >>> import numpy as np, tracejit as tj
    >>> tj.jvp(np.sin, (np.zeros(2),), (np.ones(2),))
    (array([0., 0.]), array([1., 1.]))
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if tree_flatten(primals)[1] != tree_flatten(tangents)[1]:
        raise TypeError(
            f"jvp: tangents {tree_flatten(tangents)[1]} do not match primals "
            f"{tree_flatten(primals)[1]}"
        )
    out, f_jvp = linearize(fun, *primals)
    return out, f_jvp(*tangents)


def _basis(shape: tuple[int, ...], dtype) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    return np.eye(n, dtype=dtype).reshape((n,) + tuple(shape))


def _one_array(fun: Callable, args, argnums: int, what: str):
    """`x = args[argnums]` and `fun` as a function of x alone."""
    i = _normalize_argnums(argnums, len(args), what)[0]
    x = args[i]
    if isinstance(x, (tuple, list, dict)):
        raise TypeError(f"{what} differentiates with respect to one array argument")

    def partial(x):
        return fun(*args[:i], x, *args[i + 1 :])

    return x, partial


def _stack_last(rows, out_shape, in_shape):
    """(n_in, *out) rows -> a Jacobian of shape out + in."""
    n = int(np.prod(in_shape, dtype=np.int64))
    flat = bind("reshape", rows, shape=(n, int(np.prod(out_shape, dtype=np.int64))))
    return bind("reshape", bind("transpose", flat, perm=(1, 0)), shape=out_shape + in_shape)


def _jacobian(fun: Callable, argnums: int, what: str, forward: bool):
    """One batched push of a basis: tangents through the JVP, or cotangents through the VJP."""

    def jac_fn(*args):
        x, partial = _one_array(fun, args, argnums, what)
        out, push = linearize(partial, x) if forward else vjp(partial, x)
        if isinstance(out, (tuple, list, dict)):
            raise TypeError(f"{what} supports functions returning one array")
        if 0 in _shape(x) or 0 in _shape(out):
            return np.zeros(_shape(out) + _shape(x), _dtype(out))
        if forward:
            cols = vmap(push)(_basis(_shape(x), _dtype(x)))
            return _owned(_stack_last(cols, _shape(out), _shape(x)))
        rows = vmap(lambda ct: push(ct)[0])(_basis(_shape(out), _dtype(out)))
        return _owned(bind("reshape", rows, shape=_shape(out) + _shape(x)))

    return jac_fn


def jacfwd(fun: Callable, argnums: int = 0):
    """The Jacobian of `fun` w.r.t. one array argument by forward mode: `out.shape + x.shape`.

    >>> import numpy as np, tracejit as tj
    >>> tj.jacfwd(lambda x: x * 2.0)(np.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """
    return _jacobian(fun, argnums, "jacfwd", forward=True)


def jacrev(fun: Callable, argnums: int = 0):
    """The Jacobian of `fun` w.r.t. one array argument by reverse mode: `out.shape + x.shape`.

    >>> import numpy as np, tracejit as tj
    >>> tj.jacrev(lambda x: x * 2.0)(np.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """
    return _jacobian(fun, argnums, "jacrev", forward=False)


def hessian(fun: Callable, argnums: int = 0):
    """The Hessian of a scalar function w.r.t. one array argument (`jacfwd` of `jacrev`).

    >>> import numpy as np, tracejit as tj
    >>> tj.hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacfwd(jacrev(fun, argnums), argnums)


__all__ = ["hessian", "jacfwd", "jacrev", "jvp", "linearize"]
