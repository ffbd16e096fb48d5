"""Forward mode and Jacobians: `jvp`, `linearize`, `jacfwd`, `jacrev`, `hessian`.

Forward mode is reverse mode transposed (the double-VJP trick): the pullback is linear in
its cotangent, and the VJP of a linear map is its transpose, the JVP. Where reverse mode
cannot go (a `while_loop`), forward mode is built directly (`forward_mode.py`). Jacobians push a whole
basis through the linear map at once with `vmap`, so a Jacobian is one batched program, not
one program per row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import tracejit.numpy as tnp
from tracejit.batching import vmap
from tracejit.errors import TracejitTypeError
from tracejit.forward_mode import ForwardJVP, _dtype, _shape, check_float_outputs, check_tangents
from tracejit.ir import dtypes
from tracejit.ir.autodiff_control import WhileLoopNotReversible
from tracejit.ir.custom_call import check_forward_mode
from tracejit.pytree import tree_flatten, tree_unflatten
from tracejit.tracer.tracing import owned
from tracejit.transforms import _normalize_argnums, vjp


def _zeros_like(x):
    return np.zeros(_shape(x), dtype=_dtype(x))


def _transposed(fun: Callable, primals: tuple, has_aux: bool) -> tuple:
    """linearize by transposing the pullback (raises WhileLoopNotReversible); refused
    through a custom_vjp whose bwd, which this transposes, is not linear in its cotangent."""
    res = vjp(fun, *primals, has_aux=has_aux)
    out, f_vjp = res[0], res[1]
    graph = f_vjp.traced.graph
    check_forward_mode(graph, range(len(graph.inputs) - len(f_vjp.traced.captured)))
    out_leaves, out_tree = tree_flatten(out)
    check_float_outputs(out_leaves)
    p_leaves, p_tree = tree_flatten(tuple(primals))
    ct0 = tree_unflatten(out_tree, [_zeros_like(o) for o in out_leaves])
    _, transpose = vjp(f_vjp, ct0)

    def f_jvp(*tangents):
        check_tangents(p_leaves, p_tree, tangents)
        (tangent_out,) = transpose(tuple(tangents))
        return tangent_out

    return (out, f_jvp, res[2]) if has_aux else (out, f_jvp)


def linearize(fun: Callable, *primals, has_aux: bool = False) -> tuple:
    """`(fun(*primals), f_jvp)`: `f_jvp(*tangents)` is the JVP at `primals`, reusing one
    forward evaluation for every tangent. With `has_aux`, `fun` returns `(out, aux)` and
    the result is `(out, f_jvp, aux)`. A function running a `while_loop` (which reverse
    mode, and so the transposition used here, cannot differentiate) is linearized by
    forward mode instead (`forward_mode.py`), where `f_jvp` re-runs the forward.

    >>> import numpy as np, tracejit as tj
    >>> out, f_jvp = tj.linearize(np.sin, np.zeros(2))
    >>> f_jvp(np.array([1.0, 2.0]))
    array([1., 2.])
    """
    try:
        return _transposed(fun, primals, has_aux)
    except WhileLoopNotReversible:
        return ForwardJVP(fun, primals, has_aux).linearize()


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False) -> tuple:
    """Forward mode: `(fun(*primals), d fun(primals)[tangents])` (and `aux` with `has_aux`).
    Works through `while_loop` (see `linearize`).

    >>> import numpy as np, tracejit as tj
    >>> tj.jvp(np.sin, (np.zeros(2),), (np.ones(2),))
    (array([0., 0.]), array([1., 1.]))
    """
    primals, tangents = tuple(primals), tuple(tangents)
    check_tangents(*tree_flatten(primals), tangents)  # before tracing anything
    try:
        res = _transposed(fun, primals, has_aux)
    except WhileLoopNotReversible:
        return ForwardJVP(fun, primals, has_aux).jvp(tangents)
    return (res[0], res[1](*tangents), res[2]) if has_aux else (res[0], res[1](*tangents))


def _check_input(dt, what: str, holomorphic: bool) -> None:
    """As JAX: holomorphic=True takes complex inputs only; jacfwd otherwise real ones (a
    complex input's Jacobian is not one complex matrix unless f is holomorphic), jacrev real
    or complex ones (for real outputs: rows are gradients in tj.grad's convention)."""
    if holomorphic:
        ok, want = dtypes.is_complex(dt), "complex arrays (holomorphic=True)"
    elif what == "jacfwd":
        ok, want = dtypes.is_float(dt), "float arrays, or complex ones with holomorphic=True"
    else:
        ok, want = dtypes.is_inexact(dt), "float or complex arrays"
    if not ok:
        raise TracejitTypeError(
            f"{what}: cannot differentiate with respect to an input of dtype {dt}; pass "
            f"{want} (x.astype(...)), use tj.jvp / tj.vjp directly, or leave it out of argnums"
        )


def _check_output(dt, what: str, holomorphic: bool) -> None:
    if holomorphic and not dtypes.is_complex(dt):
        raise TracejitTypeError(f"{what}(holomorphic=True) needs complex outputs, got {dt}")
    if not holomorphic and what == "jacrev" and not dtypes.is_float(dt):
        raise TracejitTypeError(
            f"{what}: an output of dtype {dt} has no derivative; jacrev needs real outputs "
            "(complex ones with holomorphic=True, or use tj.vjp directly)"
        )


class _Wrt:
    """The differentiated arguments of one call, flattened: leaves, their trees, and `fun`
    as a function of the leaves alone (the other arguments closed over)."""

    def __init__(self, fun: Callable, args: tuple, argnums, has_aux: bool, what: str,
                 holomorphic: bool = False):  # fmt: skip
        nums = _normalize_argnums(argnums, len(args), what)
        self.single = isinstance(argnums, int)
        self.leaves, self.trees, sizes = [], [], []
        for i in nums:
            leaves, tree = tree_flatten(args[i])
            self.trees.append(tree)
            sizes.append(len(leaves))
            self.leaves += leaves
        for leaf in self.leaves:
            _check_input(_dtype(leaf), what, holomorphic)
        self.sizes = sizes

        def partial(*leaves):
            full, it = list(args), iter(leaves)
            for i, tree, n in zip(nums, self.trees, sizes):
                full[i] = tree_unflatten(tree, [next(it) for _ in range(n)])
            return fun(*full)

        self.partial = partial
        self.has_aux, self.holomorphic = has_aux, holomorphic

    def assemble(self, blocks: list[list], out_tree):
        """blocks[k][j]: d out_k / d x_j -> the output tree of argument trees of blocks."""
        per_out = []
        for row in blocks:
            it, per_arg = iter(row), []
            for tree, n in zip(self.trees, self.sizes):
                per_arg.append(tree_unflatten(tree, [next(it) for _ in range(n)]))
            per_out.append(per_arg[0] if self.single else tuple(per_arg))
        return tree_unflatten(out_tree, per_out)


def _offsets(shapes: list[tuple[int, ...]]) -> list[int]:
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    return [int(o) for o in np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])]


def _basis_parts(shapes, dtypes_) -> list[np.ndarray]:
    """The identity of size N (all leaves together) split by leaf: (N, *shape_j) each."""
    off = _offsets(shapes)
    eye = np.eye(off[-1])
    return [
        eye[:, off[j] : off[j + 1]].reshape((off[-1],) + tuple(s)).astype(d)
        for j, (s, d) in enumerate(zip(shapes, dtypes_))
    ]


def _block(stacked, lo: int, hi: int, out_shape, in_shape, forward: bool):
    """One Jacobian block (out_shape + in_shape) from rows lo:hi of a pushed basis."""
    part = stacked[lo:hi]
    if forward:  # (n_in, *out) -> out + in
        part = tnp.reshape(part, (hi - lo, int(np.prod(out_shape, dtype=np.int64))))
        part = tnp.transpose(part)
    return owned(tnp.reshape(part, tuple(out_shape) + tuple(in_shape)))


def _push(wrt: _Wrt, what: str, forward: bool):
    """(out leaves, out tree, aux, blocks[k][j])."""
    x = wrt.leaves
    aux = None
    if forward:
        res = linearize(wrt.partial, *x, has_aux=wrt.has_aux)
    else:
        res = vjp(wrt.partial, *x, has_aux=wrt.has_aux)
    out, push = res[0], res[1]
    if wrt.has_aux:
        aux = res[2]
    outs, out_tree = tree_flatten(out)
    for o in outs:
        _check_output(_dtype(o), what, wrt.holomorphic)
    in_shapes, out_shapes = [_shape(v) for v in x], [_shape(o) for o in outs]
    in_off, out_off = _offsets(in_shapes), _offsets(out_shapes)
    if in_off[-1] == 0 or out_off[-1] == 0:
        blocks = [
            [np.zeros(so + si, _dtype(o)) for si in in_shapes] for so, o in zip(out_shapes, outs)
        ]
        return out_tree, aux, blocks
    if forward:
        basis = _basis_parts(in_shapes, [_dtype(v) for v in x])
        cols = tree_flatten(vmap(push)(*basis))[0]  # per output: (N_in, *out_k)
        blocks = [
            [_block(c, in_off[j], in_off[j + 1], so, si, True) for j, si in enumerate(in_shapes)]
            for c, so in zip(cols, out_shapes)
        ]
    else:
        basis = _basis_parts(out_shapes, [_dtype(o) for o in outs])
        rows = vmap(lambda *cts: push(tree_unflatten(out_tree, list(cts))))(*basis)
        rows = tree_flatten(rows)[0]  # per input: (N_out, *in_j)
        blocks = [
            [_block(r, out_off[k], out_off[k + 1], so, si, False) for r, si in zip(rows, in_shapes)]
            for k, so in enumerate(out_shapes)
        ]
    return out_tree, aux, blocks


def _jacobian(fun: Callable, argnums, has_aux: bool, holomorphic: bool, what: str,
              forward: bool):  # fmt: skip
    """One batched push of a basis: tangents through the JVP, or cotangents through the VJP."""
    if not callable(fun):
        raise TracejitTypeError(f"{what} expects a function, got {type(fun).__name__}")

    def jac_fn(*args):
        wrt = _Wrt(fun, args, argnums, has_aux, what, holomorphic)
        out_tree, aux, blocks = _push(wrt, what, forward)
        jac = wrt.assemble(blocks, out_tree)
        return (jac, aux) if has_aux else jac

    jac_fn.__name__ = f"{what}({getattr(fun, '__name__', 'function')})"
    return jac_fn


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):  # fmt: skip
    """The Jacobian of `fun` by forward mode, as `jax.jacfwd`: for each output leaf, the
    argument tree(s) of blocks shaped `out.shape + x.shape` (a tuple over a tuple argnums).
    Real inputs (outputs may be complex); `holomorphic=True`: complex inputs and outputs,
    and the blocks are the complex derivative df/dz.

    >>> import numpy as np, tracejit as tj
    >>> tj.jacfwd(lambda x: x * 2.0)(np.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """
    return _jacobian(fun, argnums, has_aux, holomorphic, "jacfwd", forward=True)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):  # fmt: skip
    """The Jacobian of `fun` by reverse mode, structured as `jacfwd`'s (and `jax.jacrev`).
    Real outputs (inputs may be complex: rows are `tj.grad`'s df/dx - i df/dy);
    `holomorphic=True`: complex inputs and outputs, and the blocks are df/dz.

    >>> import numpy as np, tracejit as tj
    >>> tj.jacrev(lambda x: x * 2.0)(np.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """
    return _jacobian(fun, argnums, has_aux, holomorphic, "jacrev", forward=False)


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False):  # fmt: skip
    """The Hessian of a scalar function (`jacfwd` of `jacrev`, as `jax.hessian`).

    >>> import numpy as np, tracejit as tj
    >>> tj.hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


__all__ = ["hessian", "jacfwd", "jacrev", "jvp", "linearize"]
