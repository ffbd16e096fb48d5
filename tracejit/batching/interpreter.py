"""`batch_graph`: the vmap transformation as a graph-to-graph function.

Given a graph for one example and, per input, the position of its batch axis (`None`: the
same for every example), it builds the graph of the whole batch: each node whose operands
are all unbatched is copied as it is, every other node is rewritten by its rule in
`BATCH_RULES`. Nested `vmap` and `vmap` of `grad` need nothing more: the inner
transformation's graph is just another graph to batch.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracejit.batching.emit import to_dim
from tracejit.batching.rules import rule_for
from tracejit.errors import BatchingError, InternalError
from tracejit.ir.builder import Emitter
from tracejit.ir.graph import Graph, Node, Value, fresh


def batched_shape(shape: tuple[int, ...], dim: int | None, size: int) -> tuple[int, ...]:
    if dim is None:
        return tuple(shape)
    return tuple(shape[:dim]) + (size,) + tuple(shape[dim:])


def batch_graph(
    graph: Graph,
    in_dims: Sequence[int | None],
    size: int,
    out_dims: Sequence[int | None],
) -> Graph:
    """The batched `graph`: inputs batched at `in_dims`, outputs placed at `out_dims`."""
    inputs = [
        Value(batched_shape(v.shape, d, size), v.dtype, v.weak)
        for v, d in zip(graph.inputs, in_dims)
    ]
    new = Graph(inputs=inputs)
    b = Emitter(new)
    env: dict[Value, tuple[Value, int | None]] = {
        v: (nv, d) for v, nv, d in zip(graph.inputs, inputs, in_dims)
    }
    for node in graph.nodes:
        b.source, b.phase = node.source, node.phase
        xs = [env[v][0] for v in node.inputs]
        dims = [env[v][1] for v in node.inputs]
        if all(d is None for d in dims):
            outs = fresh(node.outputs)
            new.nodes.append(Node(node.prim, xs, node.attrs, outs, node.source, node.phase))
            env.update((v, (o, None)) for v, o in zip(node.outputs, outs))
            continue
        outs, odims = _apply_rule(b, node, size, xs, dims)
        env.update(zip(node.outputs, zip(outs, odims)))
    b.source, b.phase = None, "forward"
    new.outputs = [
        _place(b, *env[v], want, size, i)
        for i, (v, want) in enumerate(zip(graph.outputs, out_dims))
    ]
    return new


def _apply_rule(b: Emitter, node: Node, size: int, xs, dims):
    rule = rule_for(node.prim)
    if rule is None:
        where = f"\n  at {node.source}" if node.source else ""
        raise BatchingError(
            f"no batching rule for {node.prim.name!r}: vmap cannot batch it. Loop over the "
            f"examples in Python instead, or add a rule to tracejit.batching.BATCH_RULES.{where}"
        )
    outs, odims = rule(b, size, xs, dims, **node.attrs)
    for v, o, d in zip(node.outputs, outs, odims):
        want = batched_shape(v.shape, d, size)
        if o.shape != want or o.dtype != v.dtype:
            raise InternalError(
                f"batching rule for {node.prim.name} gave {o.type_str}, expected {want} {v.dtype}"
            )
    return outs, odims


def _place(b: Emitter, x: Value, dim: int | None, want: int | None, size: int, index: int):
    if want is None:
        if dim is not None:
            raise BatchingError(
                f"vmap: output {index} varies along the batch, so out_axes cannot be None for it"
            )
        return x
    return to_dim(b, x, dim, want, size)


__all__ = ["batch_graph", "batched_shape"]
