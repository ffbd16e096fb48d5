"""Batching rules of the linear-algebra primitives, `argsort` and `sort` (tracejit/ir/linalg_prims.py,
tracejit/ir/sorting.py).

The linalg primitives already take stacks `(..., n, n)`: the batch axis moves to the front
(an unbatched operand of `solve` is broadcast along it) and becomes one more leading axis.
`argsort` and `sort` keep the batch axis where it is and sort along the shifted axis.
`searchsorted` of a shared `a` is elementwise in `v`; with a batched `a` each example's count
of elements before its values is computed by comparisons (O(n) per value, as before
ir/searchsorted.py).
"""

from __future__ import annotations

import numpy as np

from tracejit.batching.emit import to_front
from tracejit.batching.rules import along_axis, defbatch
from tracejit.ir.dtypes import is_low_precision


def _stacked_rule(name: str):
    def rule(b, size, xs, bdims, **attrs):
        args = [to_front(b, x, d, size) for x, d in zip(xs, bdims)]
        outs = b.bind_all(name, *args, **attrs)
        return outs, [0] * len(outs)

    return rule


for _name in ("solve", "inv", "cholesky", "det", "slogdet", "eigh", "eigvalsh", "svd",
              "svdvals", "qr", "fft", "eig", "eigvals"):  # fmt: skip
    defbatch(_name)(_stacked_rule(_name))


for _name in ("argsort", "sort"):
    defbatch(_name)(along_axis(_name))


def _before(b, x, y):
    """x sorts strictly before y: x < y, or y NaN and x not (for float operands)."""
    lt = b.lt(x, y)
    if x.dtype.kind != "f" and not is_low_precision(x.dtype):
        return lt
    return b.bind("or", lt, b.bind("and", b.isnan(y), b.bind("not", b.isnan(x))))


@defbatch("searchsorted")
def _searchsorted(b, size, xs, bdims, *, side):
    (a, v), (da, dv) = xs, bdims
    if da is None:  # one sorted array: each value's position alone
        return [b.searchsorted(a, v, side=side)], [dv]
    a, v = to_front(b, a, da, size), to_front(b, v, dv, size)
    k, n = len(v.shape) - 1, a.shape[1]
    full = tuple(v.shape) + (n,)
    aa = b.broadcast_in_dim(a, shape=full, dims=(0, k + 1))
    vv = b.broadcast_in_dim(v, shape=full, dims=tuple(range(k + 1)))
    hit = _before(b, aa, vv) if side == "left" else b.bind("not", _before(b, vv, aa))
    count = b.convert(hit, dtype=np.dtype(np.int64))
    return [b.reduce_sum(count, axes=(k + 1,))], [0]
