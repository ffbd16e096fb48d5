"""Passes into regions: optimize loop and branch bodies, drop what their users never read.

For each node with regions (ir/control.py), in order:

1. prune: outputs nobody reads are removed from the node and its regions (a scan's unused
   `ys`, a cond's unused results), then region inputs nothing reads are removed from the
   node and its regions (unused loop invariants and `xs`, unused branch operands). Carried
   values stay: each iteration's carry is the next one's input.
2. the same stage's pass pipeline runs on every region graph (recursively, through this pass).

A `cond` whose index is a constant is replaced by a copy of the branch it takes.

Every other pass treats a region node as one opaque, pure operation.
"""

from __future__ import annotations

from tracejit.ir.control import clamp_index
from tracejit.ir.graph import Graph, Node, Value, inline_graph
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.regions import Region, has_regions, map_regions


def _subgraph(g: Graph, keep_in: list[int], keep_out: list[int]) -> Graph:
    out = Graph([g.inputs[i] for i in keep_in], list(g.nodes), [g.outputs[i] for i in keep_out])
    return remove_dead_nodes(out)


def _read_inputs(g: Graph) -> set[Value]:
    g = remove_dead_nodes(g)
    return {v for n in g.nodes for v in n.inputs} | set(g.outputs)


def _prune_scan(node: Node, used: set[Value]) -> Node:
    a = node.attrs
    g, n_consts, n_carry = a["body"].graph, a["n_consts"], a["n_carry"]
    keep_out = list(range(n_carry)) + [
        j for j in range(n_carry, len(g.outputs)) if node.outputs[j] in used
    ]
    reads = _read_inputs(Graph(g.inputs, g.nodes, [g.outputs[j] for j in keep_out]))
    n_fixed = n_consts + n_carry
    keep_in = [i for i, v in enumerate(g.inputs) if n_consts <= i < n_fixed or v in reads]
    if len(keep_in) == len(g.inputs) and len(keep_out) == len(g.outputs):
        return node
    attrs = dict(a, body=Region(_subgraph(g, keep_in, keep_out)))
    attrs["n_consts"] = sum(1 for i in keep_in if i < n_consts)
    return Node(
        node.prim,
        [node.inputs[i] for i in keep_in],
        attrs,
        [node.outputs[j] for j in keep_out],
        node.source,
        node.phase,
    )


def _prune_cond(node: Node, used: set[Value]) -> Node:
    branches = [r.graph for r in node.attrs["branches"]]
    keep_out = [j for j, v in enumerate(node.outputs) if v in used]
    reads: set[Value] = set()
    for g in branches:
        reads |= _read_inputs(Graph(g.inputs, g.nodes, [g.outputs[j] for j in keep_out]))
    n_ops = len(branches[0].inputs)
    keep_in = [i for i in range(n_ops) if any(g.inputs[i] in reads for g in branches)]
    if len(keep_in) == n_ops and len(keep_out) == len(node.outputs):
        return node
    new = tuple(Region(_subgraph(g, keep_in, keep_out)) for g in branches)
    inputs = [node.inputs[0]] + [node.inputs[1 + i] for i in keep_in]
    outputs = [node.outputs[j] for j in keep_out]
    return Node(node.prim, inputs, dict(node.attrs, branches=new), outputs, node.source, node.phase)


_PRUNE = {"scan": _prune_scan, "cond": _prune_cond}


def _chosen_branch(node: Node, producer: dict) -> Graph | None:
    """The branch a `cond` takes when its index is a constant, else None."""
    if node.prim.name != "cond":
        return None
    index = producer.get(node.inputs[0])
    if index is None or index.prim.name != "const":
        return None
    branches = node.attrs["branches"]
    return branches[clamp_index(index.attrs["value"].array, len(branches))].graph


def region_pass(stage: str):
    """The pass of `stage`: a `cond` on a constant index becomes its branch's nodes; other
    region nodes are pruned, then `stage`'s pipeline runs in each of their regions."""

    def optimize_regions(graph: Graph, stats: dict | None = None) -> Graph:
        from tracejit.ir.passes.manager import run_passes  # the pipeline includes this pass

        if not any(has_regions(n) for n in graph.nodes):
            return graph
        used = set(graph.outputs) | {v for n in graph.nodes for v in n.inputs}
        producer = graph.producers()
        env: dict[Value, Value] = {}
        nodes, changed = [], False
        for node in graph.nodes:
            if any(v in env for v in node.inputs):
                inputs = [env.get(v, v) for v in node.inputs]
                node = Node(node.prim, inputs, node.attrs, node.outputs, node.source, node.phase)
                changed = True
            branch = _chosen_branch(node, producer)
            if branch is not None:
                env.update(zip(node.outputs, inline_graph(nodes, branch, node.inputs[1:])))
                changed = True
                continue
            new = node
            if node.prim.name in _PRUNE and has_regions(node):
                new = _PRUNE[node.prim.name](node, used)
            new = map_regions(new, lambda g: run_passes(g, stage)[0])
            changed |= new is not node
            nodes.append(new)
        if not changed:
            return graph
        if stats is not None:
            stats["regions"] = stats.get("regions", 0) + 1
        outputs = [env.get(v, v) for v in graph.outputs]
        return remove_dead_nodes(Graph(list(graph.inputs), nodes, outputs))

    return optimize_regions


__all__ = ["region_pass"]
