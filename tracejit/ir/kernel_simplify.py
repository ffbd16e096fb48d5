"""Loop-nest simplification of the schedule's kernels: drop extent-1 dims, merge contiguous
dims. `fuse` (ir/fusion.py) runs it once on every kernel it schedules, so both backends
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

from tracejit.ir import kernel as K


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
        outer=tuple(extent(g) for g in outer_groups),
        inner=tuple(extent(g) for g in inner_groups),
    )
