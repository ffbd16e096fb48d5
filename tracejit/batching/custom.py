"""The batching rule of `custom_vjp_call`: batch its three graphs, keep the user's rule.

Every operand is batched first (an unbatched one is broadcast, so its cotangent is summed
over the batch by the broadcast's own VJP), then the primal, forward and backward graphs
are batched with every input and output at axis 0; the forward and backward ones only when
a transformation differentiates the batched call (the rules are traced then, if not yet).
"""

from __future__ import annotations

from tracejit.batching.emit import to_front
from tracejit.batching.interpreter import batch_graph
from tracejit.batching.rules import defbatch
from tracejit.ir.custom_call import CustomCall
from tracejit.ir.graph import Graph

_batched: dict[tuple[int, int], tuple[CustomCall, CustomCall]] = {}


def _all_first(graph: Graph, size: int) -> Graph:
    return batch_graph(graph, [0] * len(graph.inputs), size, [0] * len(graph.outputs))


def batch_call(call: CustomCall, size: int) -> CustomCall:
    key = (id(call), size)
    hit = _batched.get(key)
    if hit is None or hit[0] is not call:
        batched = CustomCall(
            f"vmap({call.name})",
            _all_first(call.primal, size),
            lambda: (
                _all_first(call.fwd, size),
                _all_first(call.bwd, size),
                lambda: call.nonlinear,
            ),
        )
        hit = _batched[key] = (call, batched)  # the original is kept so its id stays unique
    return hit[1]


@defbatch("custom_vjp_call")
def _custom_vjp_call(b, size, xs, bdims, *, call):
    args = [to_front(b, x, d, size) for x, d in zip(xs, bdims)]
    outs = b.bind_all("custom_vjp_call", *args, call=batch_call(call, size))
    return outs, [0] * len(outs)


__all__ = ["batch_call"]
