"""Start each collective as early as its operands allow: the order the CPU backend compiles.

A data-parallel step computes the whole backward pass, then `pmean`s the gradients in
buckets (tracejit/lax/parallel.py). Traced in that order, every all-reduce would run after
the last backward kernel. `collectives_early` reorders the graph's nodes (a topological sort)
so that the nodes a collective needs come first, then the collective, then the work of the
next one: the bucket of the last layer's gradients is reduced while the earlier layers'
gradients are still to be computed, as PyTorch DDP does. Each node is ranked by the first
collective (in trace order) that depends on it; ties keep the trace order, and effectful
nodes keep their order among themselves (so every process runs its collectives in the same
order).

>>> import numpy as np, tracejit as tj
>>> def f(x):
...     e = tj.numpy.exp(x) * x
...     return tj.lax.psum(tj.numpy.sin(x), "i"), e
>>> g = tj.make_ir(tj.distributed.spmd(f, "i"))(np.ones(3))
>>> [n.prim.name for n in g.nodes]
['exp', 'mul', 'sin', 'psum']
>>> [n.prim.name for n in collectives_early(g).nodes]
['sin', 'psum', 'exp', 'mul']
"""

from __future__ import annotations

import heapq
import itertools
import math

from tracejit.ir.graph import Graph


def collectives_early(graph: Graph) -> Graph:
    """`graph` with its nodes reordered so that each collective runs as early as it can."""
    nodes = graph.nodes
    if not any(n.prim.effectful for n in nodes):  # a collective (ir/primitives.py)
        return graph
    producer = {v: i for i, n in enumerate(nodes) for v in n.outputs}
    deps = [{producer[v] for v in n.inputs if v in producer} for n in nodes]
    effectful = [i for i, n in enumerate(nodes) if n.prim.effectful]
    for before, after in itertools.pairwise(effectful):
        deps[after].add(before)
    rank = [math.inf] * len(nodes)  # the first collective that needs node i
    for i in reversed(range(len(nodes))):
        if nodes[i].prim.effectful:
            rank[i] = min(rank[i], i)
        for d in deps[i]:
            rank[d] = min(rank[d], rank[i])
    users: list[list[int]] = [[] for _ in nodes]
    for i, ds in enumerate(deps):
        for d in ds:
            users[d].append(i)
    waiting = [len(ds) for ds in deps]
    ready = [(rank[i], i) for i in range(len(nodes)) if not waiting[i]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(nodes[i])
        for u in users[i]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (rank[u], u))
    return Graph(graph.inputs, order, graph.outputs)


__all__ = ["collectives_early"]
