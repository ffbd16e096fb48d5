"""The axis moves every batching rule shares (rules write nodes with `ir.builder.Emitter`)."""

from __future__ import annotations

from tracejit.ir.builder import Emitter
from tracejit.ir.graph import Value


def move_axis(b: Emitter, x: Value, src: int, dst: int) -> Value:
    """`x` with axis `src` moved to position `dst` (a transpose, or `x` itself)."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    if perm == list(range(x.ndim)):
        return x
    return b.transpose(x, perm=tuple(perm))


def to_front(b: Emitter, x: Value, dim: int | None, size: int) -> Value:
    """`x` with its batch axis first; an unbatched `x` is broadcast along a new first axis."""
    if dim is None:
        return b.broadcast_in_dim(x, shape=(size,) + x.shape, dims=tuple(range(1, x.ndim + 1)))
    return move_axis(b, x, dim, 0)


def to_dim(b: Emitter, x: Value, dim: int | None, want: int, size: int) -> Value:
    """`x` with its batch axis at `want` (broadcast first when it has none)."""
    if dim is None:
        x, dim = to_front(b, x, None, size), 0
    return move_axis(b, x, dim, want)


__all__ = ["move_axis", "to_dim", "to_front"]
