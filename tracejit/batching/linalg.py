"""Batching rules of the linear-algebra primitives, `argsort` and `sort` (tracejit/ir/linalg_prims.py,
tracejit/ir/sorting.py).

The linalg primitives already take stacks `(..., n, n)`: the batch axis moves to the front
(an unbatched operand of `solve` is broadcast along it) and becomes one more leading axis.
`argsort` and `sort` keep the batch axis where it is and sort along the shifted axis.
"""

from __future__ import annotations

from tracejit.batching.emit import to_front
from tracejit.batching.rules import along_axis, defbatch


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
