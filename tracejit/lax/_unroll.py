"""`scan(..., unroll=k)`: a loop whose body runs `k` iterations, plus the leftover ones.

`n = blocks * k + rest`. The main loop runs `blocks` trips over xs reshaped to
`(blocks, k, ...)`, its body calling `f` k times (a longer straight-line body the fuser can
optimize across iterations, fewer trips); the `rest` iterations run as a second scan. In
reverse order the leftovers are the first `rest` indices, visited last.
"""

from __future__ import annotations

from tracejit import numpy as tnp
from tracejit.pytree import tree_flatten, tree_map, tree_unflatten


def _block_body(f, k: int, reverse: bool):
    def body(carry, xblk):
        ys = [None] * k
        for j in reversed(range(k)) if reverse else range(k):
            carry, ys[j] = f(carry, tree_map(lambda a, j=j: a[j], xblk))
        leaves = [tree_flatten(y)[0] for y in ys]
        stacked = [tnp.stack([ls[i] for ls in leaves]) for i in range(len(leaves[0]))]
        return carry, tree_unflatten(tree_flatten(ys[0])[1], stacked)

    return body


def _concat(parts: list[list]) -> list:
    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    return [tnp.concatenate(leaves, axis=0) for leaves in zip(*parts)]


def scan_unrolled(scan_flat, f, init_leaves, init_tree, x_leaves, x_tree, n, reverse, k):
    """(final carry leaves, ys leaves, ys tree) of `n` iterations unrolled by `k`."""
    k = min(k, n)
    blocks, rest = divmod(n, k)
    lo, hi = (rest, n) if reverse else (0, blocks * k)
    main_xs = [tnp.reshape(x[lo:hi], (blocks, k) + tuple(x.shape[1:])) for x in x_leaves]
    body = _block_body(f, k, reverse)
    carry, ys, y_tree = scan_flat(body, init_leaves, init_tree, main_xs, x_tree, blocks, reverse)
    ys = [tnp.reshape(y, (blocks * k,) + tuple(y.shape[2:])) for y in ys]
    if rest == 0:
        return carry, ys, y_tree
    r_lo, r_hi = (0, rest) if reverse else (blocks * k, n)
    rest_xs = [x[r_lo:r_hi] for x in x_leaves]
    carry, rest_ys, _ = scan_flat(f, carry, init_tree, rest_xs, x_tree, rest, reverse)
    return carry, _concat([rest_ys, ys] if reverse else [ys, rest_ys]), y_tree


__all__ = ["scan_unrolled"]
