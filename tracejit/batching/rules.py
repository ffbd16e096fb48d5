"""One batching rule per primitive, in `BATCH_RULES` (keyed by `Primitive`, like `VJP_RULES`).

A rule receives an `Emitter`, the batch size, the operands as `Value`s of the batched graph,
the position of each operand's batch axis (`None`: the operand is the same for every
example) and the node's attributes; it returns the outputs and their batch axes:

    rule(b, size, xs, bdims, **attrs) -> (outputs, output_bdims)

Every elementwise primitive shares one rule (the table's default), so a new elementwise
primitive batches with no entry here. The interpreter calls a rule only when some operand is
batched. Rules keep an operand's
batch axis where it is when that costs nothing (reductions, `rev`, gathers with unbatched
indices) and otherwise move it to the front.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tracejit.batching.emit import move_axis, to_front
from tracejit.debug_print import debug_print_p
from tracejit.errors import InternalError
from tracejit.ir.builder import Emitter
from tracejit.ir.graph import Value
from tracejit.ir.primitives import ELEMENTWISE, Primitive, RuleTable
from tracejit.ir.prng import threefry2x32_p

Rule = Callable[..., tuple[list[Value], list]]


def _default(prim: Primitive) -> Rule | None:
    return elementwise(prim.name) if prim.kind == ELEMENTWISE else None


BATCH_RULES = RuleTable("batching", default=_default)
defbatch = BATCH_RULES.register


def rule_for(prim: Primitive | str) -> Rule | None:
    """The rule of `prim` (or of the primitive of that name); elementwise ones all share one."""
    return BATCH_RULES.get(prim)


def _phys(axis: int, dim: int) -> int:
    """Where per-example axis `axis` sits in an operand whose batch axis is `dim`."""
    return axis + (axis >= dim)


# ---------------------------------------------------------------- elementwise


def elementwise(name: str) -> Rule:
    """The rule of `name` computing each example's result from the examples' operands alone
    (every elementwise primitive; a collective of one operand, batching/parallel.py)."""

    def rule(b, size, xs, bdims, **attrs):
        batched = {d for d in bdims if d is not None}
        if len(batched) == 1 and None not in bdims:  # one layout already: no data movement
            return [b.bind(name, *xs, **attrs)], [bdims[0]]
        args = [to_front(b, x, d, size) for x, d in zip(xs, bdims)]
        return [b.bind(name, *args, **attrs)], [0]

    return rule


# ---------------------------------------------------------------- reductions and scans


def _reduction(name: str) -> Rule:
    def rule(b, size, xs, bdims, *, axes):
        ((x,), (d,)) = xs, bdims
        phys = tuple(sorted(_phys(a, d) for a in axes))
        out_dim = d - sum(a < d for a in phys)
        return [b.bind(name, x, axes=phys)], [out_dim]

    return rule


for _name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
    defbatch(_name)(_reduction(_name))


def _arg_reduction(name: str) -> Rule:
    def rule(b, size, xs, bdims, *, axis):
        ((x,), (d,)) = xs, bdims
        phys = _phys(axis, d)
        return [b.bind(name, x, axis=phys)], [d - (phys < d)]

    return rule


for _name in ("argmax", "argmin"):
    defbatch(_name)(_arg_reduction(_name))


def along_axis(name: str) -> Rule:
    """The rule of a primitive working along one `axis` of its operand (scans, sorts)."""

    def rule(b, size, xs, bdims, *, axis):
        ((x,), (d,)) = xs, bdims
        return [b.bind(name, x, axis=_phys(axis, d))], [d]

    return rule


for _name in ("cumsum", "cumprod"):
    defbatch(_name)(along_axis(_name))


# ---------------------------------------------------------------- layout


@defbatch("reshape")
def _reshape(b, size, xs, bdims, *, shape):
    x = to_front(b, xs[0], bdims[0], size)
    return [b.reshape(x, shape=(size,) + tuple(shape))], [0]


@defbatch("transpose")
def _transpose(b, size, xs, bdims, *, perm):
    x = to_front(b, xs[0], bdims[0], size)
    return [b.transpose(x, perm=(0,) + tuple(p + 1 for p in perm))], [0]


@defbatch("broadcast_in_dim")
def _broadcast_in_dim(b, size, xs, bdims, *, shape, dims):
    x = to_front(b, xs[0], bdims[0], size)
    out_dims = (0,) + tuple(d + 1 for d in dims)
    return [b.broadcast_in_dim(x, shape=(size, *shape), dims=out_dims)], [0]


@defbatch("slice")
def _slice(b, size, xs, bdims, *, starts, stops, steps):
    x = to_front(b, xs[0], bdims[0], size)
    out = b.slice(x, starts=(0, *starts), stops=(size, *stops), steps=(1, *steps))
    return [out], [0]


@defbatch("rev")
def _rev(b, size, xs, bdims, *, axes):
    ((x,), (d,)) = xs, bdims
    return [b.rev(x, axes=tuple(sorted(_phys(a, d) for a in axes)))], [d]


def _all_front_axis(name: str) -> Rule:
    """Every operand batched first, the `axis` attribute shifted past the batch axis."""

    def rule(b, size, xs, bdims, *, axis):
        args = [to_front(b, x, d, size) for x, d in zip(xs, bdims)]
        return [b.bind(name, *args, axis=axis + 1)], [0]

    return rule


for _name in ("concatenate", "take_along_axis", "take_along_add"):
    defbatch(_name)(_all_front_axis(_name))


@defbatch("pad")
def _pad(b, size, xs, bdims, *, widths):
    (x, value), (dx, dv) = xs, bdims
    x = to_front(b, x, dx, size)
    widths = ((0, 0), *widths)
    if dv is None:
        return [b.pad(x, value, widths=widths)], [0]
    # One padding value per example: pad with zeros, then choose the value outside x.
    padded = b.pad(x, b.const(0, x.dtype), widths=widths)
    inside = b.pad(b.full(1, x), b.const(0, x.dtype), widths=widths)
    mask = b.eq(inside, b.full(1, inside))
    fill = b.broadcast_in_dim(to_front(b, value, dv, size), shape=padded.shape, dims=(0,))
    return [b.select(mask, padded, fill)], [0]


# ---------------------------------------------------------------- gather / scatter


def _flat_indices(b: Emitter, idx: Value, n: int) -> Value:
    """Batched indices (batch axis first) into the batch-major flattening of an axis of n.

    Clamped per example first, exactly as `take` clamps (`structural._clamp_index`), so an
    index never lands in a neighbouring example's rows.
    """
    wrapped = b.select(b.lt(idx, b.full(0, idx)), b.add(idx, b.full(n, idx)), idx)
    clamped = b.min(b.max(wrapped, b.full(0, idx)), b.full(max(n - 1, 0), idx))
    row = b.iota(shape=idx.shape, dtype=idx.dtype, axis=0)
    return b.add(clamped, b.mul(row, b.full(n, idx)))


def _merge_axis(b: Emitter, x: Value, axis: int) -> Value:
    """(B, ..., n at 1+axis, ...) -> (B*n, ...rest): the batch and the indexed axis as one."""
    x = move_axis(b, x, axis + 1, 1)
    return b.reshape(x, shape=(x.shape[0] * x.shape[1],) + x.shape[2:])


@defbatch("take")
def _take(b, size, xs, bdims, *, axis):
    (x, idx), (dx, di) = xs, bdims
    if di is None:
        phys = _phys(axis, dx)
        out_dim = dx if dx < phys else dx - 1 + idx.ndim
        return [b.take(x, idx, axis=phys)], [out_dim]
    if dx is None:
        return [b.take(x, idx, axis=axis)], [axis + di]
    x, idx = to_front(b, x, dx, size), to_front(b, idx, di, size)
    n = x.shape[axis + 1]
    out = b.take(_merge_axis(b, x, axis), _flat_indices(b, idx, n), axis=0)
    # (B, I..., P..., Q...) -> (B, P..., I..., Q...)
    ni = idx.ndim - 1
    perm = (0, *range(1 + ni, 1 + ni + axis), *range(1, 1 + ni), *range(1 + ni + axis, out.ndim))
    return [b.transpose(out, perm=perm) if perm != tuple(range(out.ndim)) else out], [0]


@defbatch("take_add")
def _take_add(b, size, xs, bdims, *, axis):
    (x, idx, upd), (dx, di, du) = xs, bdims
    x, upd = to_front(b, x, dx, size), to_front(b, upd, du, size)
    if di is None:
        return [b.take_add(x, idx, upd, axis=axis + 1)], [0]
    idx = to_front(b, idx, di, size)
    n, ni = x.shape[axis + 1], idx.ndim - 1
    # updates (B, P..., I..., Q...) -> (B, I..., P..., Q...), matching take(x_flat, flat_idx)
    perm = (
        0,
        *range(1 + axis, 1 + axis + ni),
        *range(1, 1 + axis),
        *range(1 + axis + ni, upd.ndim),
    )
    upd = b.transpose(upd, perm=perm) if perm != tuple(range(upd.ndim)) else upd
    flat = b.take_add(_merge_axis(b, x, axis), _flat_indices(b, idx, n), upd, axis=0)
    rest = x.shape[1 : axis + 1] + x.shape[axis + 2 :]
    moved = (size, n) + rest  # x with the indexed axis moved next to the batch axis
    out = move_axis(b, b.reshape(flat, shape=moved), 1, axis + 1)
    return [out], [0]


# ---------------------------------------------------------------- matmul


@defbatch("matmul")
def _matmul(b, size, xs, bdims, **attrs):
    (x, y), (dx, dy) = xs, bdims
    if dy is None and y.ndim == 2:  # (B, ..., m, k) @ (k, n): one large matmul
        x = to_front(b, x, dx, size)
        rows = b.reshape(x, shape=(int(np.prod(x.shape[:-1])), x.shape[-1]))
        out = b.matmul(rows, y)
        return [b.reshape(out, shape=x.shape[:-1] + (y.shape[-1],))], [0]
    if dx is None and x.ndim == 2:  # (m, k) @ (B, ..., k, n): one large matmul
        y = to_front(b, y, dy, size)
        cols = move_axis(b, y, y.ndim - 2, 0)  # (k, B, ..., n)
        out = b.matmul(x, b.reshape(cols, shape=(cols.shape[0], int(np.prod(cols.shape[1:])))))
        out = b.reshape(out, shape=(x.shape[0],) + cols.shape[1:])  # (m, B, ..., n)
        return [move_axis(b, out, 0, out.ndim - 2)], [0]
    return [b.matmul(to_front(b, x, dx, size), to_front(b, y, dy, size))], [0]


# ---------------------------------------------------------------- creation and random


@defbatch("const", "iota")
def _no_operands(b, size, xs, bdims, **attrs):
    raise InternalError("a primitive without operands is never batched")


@defbatch(threefry2x32_p)
def _threefry(b, size, xs, bdims):
    # One key per example: the cipher's key is a scalar pair, so run it once per example.
    key, counts = (to_front(b, x, d, size) for x, d in zip(xs, bdims))
    n = counts.shape[1]
    if size == 0:
        return [b.full(0, counts)], [0]
    rows = []
    for i in range(size):
        k = b.reshape(b.slice(key, starts=(i, 0), stops=(i + 1, 2), steps=(1, 1)), shape=(2,))
        c = b.reshape(b.slice(counts, starts=(i, 0), stops=(i + 1, n), steps=(1, 1)), shape=(n,))
        rows.append(b.reshape(b.threefry2x32(k, c), shape=(1, n)))
    return [rows[0] if size == 1 else b.concatenate(*rows, axis=0)], [0]


@defbatch(debug_print_p)
def _debug_print(b, size, xs, bdims, *, fmt, tree):
    # prints the whole batch at once, each printed array with the batch axis first
    args = [to_front(b, x, d, size) for x, d in zip(xs, bdims)]
    b.bind_all("debug_print", *args, fmt=fmt, tree=tree)
    return [], []


__all__ = ["BATCH_RULES", "defbatch", "rule_for"]
