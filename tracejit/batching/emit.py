"""The node builder batching rules write with, and the axis moves every rule shares."""

from __future__ import annotations

import numpy as np

from tracejit.errors import TracejitAttributeError
from tracejit.ir.builder import GraphBuilder
from tracejit.ir.graph import ConstValue, Graph, Value
from tracejit.ir.primitives import get


class Builder:
    """Appends nodes to `graph`; `b.mul(x, y)` binds the primitive `mul`.

    `source` and `phase` are copied from the node being batched, so error reports and
    `debug_nans` still point at the user's line and pass.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.source: str | None = None
        self.phase = "forward"
        self._builder = GraphBuilder(graph)  # interning: equal nodes are added once

    def bind_all(self, name: str, *inputs: Value, **attrs) -> list[Value]:
        return self._builder.bind(get(name), list(inputs), attrs, self.source, self.phase)

    def bind(self, name: str, *inputs: Value, **attrs) -> Value:
        return self.bind_all(name, *inputs, **attrs)[0]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise TracejitAttributeError(name)
        return lambda *xs, **attrs: self.bind(name, *xs, **attrs)

    def const(self, value, dtype) -> Value:
        return self.bind("const", value=ConstValue(np.asarray(value, dtype)))

    def full(self, value, shape: tuple[int, ...], dtype) -> Value:
        scalar = self.const(value, dtype)
        return self.broadcast_in_dim(scalar, shape=tuple(shape), dims=()) if shape else scalar


def move_axis(b: Builder, x: Value, src: int, dst: int) -> Value:
    """`x` with axis `src` moved to position `dst` (a transpose, or `x` itself)."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    if perm == list(range(x.ndim)):
        return x
    return b.transpose(x, perm=tuple(perm))


def to_front(b: Builder, x: Value, dim: int | None, size: int) -> Value:
    """`x` with its batch axis first; an unbatched `x` is broadcast along a new first axis."""
    if dim is None:
        return b.broadcast_in_dim(x, shape=(size,) + x.shape, dims=tuple(range(1, x.ndim + 1)))
    return move_axis(b, x, dim, 0)


def to_dim(b: Builder, x: Value, dim: int | None, want: int, size: int) -> Value:
    """`x` with its batch axis at `want` (broadcast first when it has none)."""
    if dim is None:
        x, dim = to_front(b, x, None, size), 0
    return move_axis(b, x, dim, want)


__all__ = ["Builder", "move_axis", "to_dim", "to_front"]
