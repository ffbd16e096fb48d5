"""`associative_scan`: an inclusive scan with an associative `fn`, in O(log n) array steps.

The parallel-prefix scheme of Blelloch ("Prefix sums and their applications", 1990), as
`jax.lax.associative_scan` does it: combine neighbouring pairs, scan the half-length result
recursively, then fill in the even positions. Every step is a whole-array call of `fn` on
strided slices, so the trace has about 2 log2(n) calls of `fn`, and it differentiates like
any other tnp code.

>>> import numpy as np
>>> from tracejit import lax
>>> import tracejit.numpy as tnp
>>> lax.associative_scan(tnp.add, np.arange(1.0, 6.0))
array([ 1.,  3.,  6., 10., 15.])
"""

from __future__ import annotations

from tracejit import numpy as tnp
from tracejit.errors import ShapeError
from tracejit.pytree import tree_flatten, tree_unflatten


def _slice(x, axis: int, start, stop, step=1):
    return x[(slice(None),) * axis + (slice(start, stop, step),)]


def _interleave(a, b, axis: int):
    """a[0], b[0], a[1], b[1], ... along `axis` (len(a) is len(b) or len(b) + 1)."""
    extra = tnp.shape(a)[axis] - tnp.shape(b)[axis]
    head = _slice(a, axis, 0, tnp.shape(b)[axis]) if extra else a
    pairs = tnp.stack([head, b], axis=axis + 1)
    shape = list(tnp.shape(head))
    shape[axis] *= 2
    out = tnp.reshape(pairs, tuple(shape))
    return tnp.concatenate([out, _slice(a, axis, -1, None)], axis=axis) if extra else out


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The inclusive scan `fn(...fn(fn(e0, e1), e2)..., ek)` of every prefix of `elems` (a
    pytree of arrays with one length along `axis`), for an associative `fn` that maps two
    such pytrees (of any equal lengths) to one, elementwise along `axis`.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> import tracejit.numpy as tnp
    >>> lax.associative_scan(tnp.maximum, np.array([1, 3, 2, 5, 4]), reverse=True)
    array([5, 5, 5, 5, 4])
    """
    leaves, treedef = tree_flatten(elems)
    leaves = [tnp.asarray(x) for x in leaves]
    if not leaves:
        return elems
    nd = tnp.ndim(leaves[0])
    if not -nd <= axis < nd:
        raise ShapeError(f"associative_scan: axis {axis} is out of range for rank {nd}")
    axis %= nd
    lengths = {tnp.shape(x)[axis] if tnp.ndim(x) > axis else None for x in leaves}
    if len(lengths) != 1 or None in lengths:
        raise ShapeError(
            f"associative_scan: every array needs one length along axis {axis}, got "
            f"{[tnp.shape(x) for x in leaves]}"
        )
    if reverse:
        leaves = [tnp.flip(x, axis) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(treedef, a), tree_unflatten(treedef, b))
        return [tnp.asarray(x) for x in tree_flatten(out)[0]]

    def scan(xs):
        n = tnp.shape(xs[0])[axis]
        if n < 2:
            return xs
        odd = scan(combine([_slice(x, axis, 0, -1, 2) for x in xs],
                           [_slice(x, axis, 1, None, 2) for x in xs]))  # fmt: skip
        rest = [_slice(x, axis, 2, None, 2) for x in xs]
        left = [_slice(o, axis, 0, -1) for o in odd] if n % 2 == 0 else odd
        even = combine(left, rest) if tnp.shape(rest[0])[axis] else rest
        even = [tnp.concatenate([_slice(x, axis, 0, 1), e], axis=axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(leaves)
    if reverse:
        out = [tnp.flip(x, axis) for x in out]
    return tree_unflatten(treedef, out)


__all__ = ["associative_scan"]
