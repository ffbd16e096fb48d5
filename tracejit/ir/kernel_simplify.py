"""Loop-nest simplification of the schedule's kernels: drop extent-1 dims, merge contiguous
dims (and NumPy's scalar-exponent `power`: `scalar_pow`). `fuse` (ir/fusion.py) runs it once on every kernel it schedules, so both backends
receive simplified kernels. It rewrites the loop IR (`Kernel`), not the graph: the graph's
pattern passes are rule tables of the rewrite engine (ir/passes/rewrite.py).

Two adjacent loop dims merge when every affine access walks them as one
(`coef[d] == coef[d + 1] * extent[d + 1]`): a contiguous elementwise kernel over (64, 1024)
becomes one flat loop of 65536 that splits evenly across threads and vectorizes end to end.
Outer and inner (reduced) dims never merge with each other.

>>> from tracejit.ir import kernel as K
>>> import numpy as np
>>> f32 = np.dtype("float32")
>>> k = K.Kernel("k", (4, 8), (), [], [K.Store(1, 0, (8, 1), K.Load(0, 0, (8, 1), f32), 0)])
>>> simplify(k).outer
(32,)
"""

from __future__ import annotations

import numpy as np

from tracejit.ir import kernel as K

_FAST_POW = (np.dtype(np.float32), np.dtype(np.float64))


def scalar_pow(node: K.Op) -> K.Expr:
    """NumPy's float `power` loop takes a fast path when the exponent is one value for the
    whole loop (a 0-d exponent, or one broadcast with stride 0): 0.5 is `sqrt`, so
    `-inf ** 0.5` is nan and `-0.0 ** 0.5` is -0.0 where `pow` gives inf and 0.0. A literal
    exponent takes it in the C rendering (elementwise_ops/pow.py); a pow whose exponent is
    a load of one element (every stride 0) chooses at run time, as NumPy's loop does.

    >>> f32 = np.dtype(np.float32)
    >>> p = K.Op("pow", (K.Load(0, 0, (1,), f32), K.Load(1, 0, (0,), f32)), f32, f32)
    >>> scalar_pow(p).prim, scalar_pow(p).args[1].prim, scalar_pow(p).args[2] is p
    ('select', 'sqrt', True)
    """
    if node.prim != "pow" or node.dtype not in _FAST_POW:
        return node
    x, y = node.args
    if not isinstance(y, K.Load) or any(y.strides):
        return node
    is_half = K.Op("eq", (y, K.Literal(0.5, node.dtype)), node.dtype, np.dtype(np.bool_))
    root = K.Op("sqrt", (x,), node.dtype, node.dtype)
    return K.Op("select", (is_half, root, node), node.dtype, node.dtype)


def _plan(extents: list[int], first: int, vectors, keep: set[int]) -> list[list[int]]:
    """Groups of original dims (indices from `first`) that become one dim each."""
    groups: list[list[int]] = []
    for d in range(first, first + len(extents)):
        ext = extents[d - first]
        if ext == 1 and d not in keep:
            continue
        if groups and d not in keep and groups[-1][-1] not in keep:
            last = groups[-1][-1]
            if all(v[last] == v[d] * ext for v in vectors):
                groups[-1].append(d)
                continue
        groups.append([d])
    return groups


def simplify(kernel: K.Kernel) -> K.Kernel:
    """An equivalent kernel with fewer, longer loop dims."""
    vectors = [coefs for _, coefs in kernel.affine_maps()]
    nouter = len(kernel.outer)
    keep = {r.arg_dim for r in kernel.reductions if r.arg_dim >= 0}
    extents = list(kernel.outer) + list(kernel.inner)
    outer_groups = _plan(list(kernel.outer), 0, vectors, set())
    inner_groups = _plan(list(kernel.inner), nouter, vectors, keep)
    groups = outer_groups + inner_groups

    def coefs(vec: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(vec[g[-1]] for g in groups)

    def extent(g: list[int]) -> int:
        n = 1
        for d in g:
            n *= extents[d]
        return n

    def leaf(node):
        if isinstance(node, K.Load):
            return K.Load(node.buf, node.offset, coefs(node.strides), node.dtype)
        return K.Index(node.offset, coefs(node.coefs), node.dtype)

    new_arg = {d: i for i, g in enumerate(groups) for d in g}
    return K.rebuild(
        kernel,
        leaf,
        lambda s, expr: K.Store(s.buf, s.offset, coefs(s.strides), expr, s.phase),
        arg_dim=lambda d: new_arg.get(d, -1),
        op=scalar_pow,
        outer=tuple(extent(g) for g in outer_groups),
        inner=tuple(extent(g) for g in inner_groups),
    )
