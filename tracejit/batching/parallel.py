"""Batching rules of the collectives (`tracejit/lax/parallel.py`).

A collective combines the same position of every process's array, so the batch axis of a
`vmap` inside `spmd` is carried through: element-wise collectives keep it where it is,
`all_gather` shifts it past its new leading process axis, `psum_scatter` takes it behind the
process axis it removes.

Imported by `tracejit/lax/parallel.py` once it has registered the collectives (and, imported
first, imports that module: the rules name its primitives).
"""

from __future__ import annotations

import tracejit.lax.parallel  # noqa: F401  (registers the primitives named below)
from tracejit.batching.emit import move_axis
from tracejit.batching.rules import defbatch, elementwise

for _name in ("psum", "pmax", "pmin", "ppermute"):
    defbatch(_name)(elementwise(_name))  # one operand, examples apart


@defbatch("all_gather")
def _all_gather(b, size, xs, bdims, **attrs):
    ((x,), (d,)) = xs, bdims
    return [b.bind("all_gather", x, **attrs)], [d + 1]


@defbatch("psum_scatter")
def _psum_scatter(b, size, xs, bdims, **attrs):
    ((x,), (d,)) = xs, bdims
    if d == 0:  # the process axis must lead: put the batch axis right behind it
        x, d = move_axis(b, x, 0, 1), 1
    return [b.bind("psum_scatter", x, **attrs)], [d - 1]


@defbatch("axis_index")
def _axis_index(b, size, xs, bdims, **attrs):
    return [b.bind("axis_index", **attrs)], [None]  # no operands: never batched
