"""Checkpoints inside one compiled program: recompute a region next to its backward use.

`jit(grad(f))` compiles the forward and the backward as one graph, so nothing is saved or
recomputed unless the graph itself says so. `rematerialize(joint, ...)` does what the `vjp`
partition does, inside the graph: the min-cut picks the residuals (the region's inputs and
what its policy saves), and each recomputation is emitted right before the first backward
node that needs it, reading the residuals through `remat_barrier` so that no pass merges it
back into the forward. The region's values then die after their forward use, and one region
is recomputed at a time in the backward.
"""

from __future__ import annotations

from tracejit.ir.graph import Graph, Node, Value, dependents, fresh
from tracejit.ir.partition import partition, split_by_dependence
from tracejit.ir.remat import checkpointed_values, remat_barrier_p


def rematerialize(joint: Graph, n_primals: int, n_outputs: int) -> Graph:
    """`joint` with checkpointed regions recomputed in its backward; `joint` if it has none."""
    cotangents = set(joint.inputs[n_primals:])
    forward, _ = split_by_dependence(joint, cotangents)
    if not checkpointed_values(forward):
        return joint
    part = partition(joint, n_primals, n_outputs, 1.0)
    out = Graph(list(joint.inputs), list(part.forward.nodes), [])
    env = _Emitter(out, part.backward, set(part.residuals), cotangents)
    for node in part.backward.nodes:
        if any(v in env.reads_cotangent for v in node.inputs):
            env.emit(node)
    out.outputs = list(joint.outputs[:n_outputs]) + [env.get(v) for v in part.backward.outputs]
    return out


class _Emitter:
    """Emits backward nodes in order, each recomputation on demand just before its use."""

    def __init__(self, out: Graph, backward: Graph, residuals: set[Value], cotangents):
        self.out = out
        self.producer = {v: n for n in backward.nodes for v in n.outputs}
        self.residuals = residuals
        self.env: dict[Value, Value] = {c: c for c in cotangents}
        self.reads_cotangent = dependents(backward.nodes, cotangents)

    def get(self, v: Value) -> Value:
        if v not in self.env:
            self._recompute(v)
        return self.env[v]

    def emit(self, node: Node) -> None:
        ins = [self.get(v) for v in node.inputs]
        outs = fresh(node.outputs)
        self.out.nodes.append(Node(node.prim, ins, node.attrs, outs, node.source, node.phase))
        self.env.update(zip(node.outputs, outs))

    def _recompute(self, target: Value) -> None:
        """Emit what `target` needs, inputs first (an explicit stack: no recursion limit)."""
        stack = [target]
        while stack:
            v = stack[-1]
            if v in self.env:
                stack.pop()
            elif v in self.residuals:
                out = Value(v.shape, v.dtype, v.weak)
                self.out.nodes.append(Node(remat_barrier_p, [v], {}, [out], None, "backward"))
                self.env[v] = out
                stack.pop()
            else:
                node = self.producer[v]
                missing = [u for u in node.inputs if u not in self.env]
                if missing:
                    stack.extend(missing)
                else:
                    self.emit(node)
                    stack.pop()


__all__ = ["rematerialize"]
