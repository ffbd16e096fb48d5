"""Split a joint forward/backward graph into a forward graph and a backward graph.

The forward graph returns the outputs and the *residuals*; the backward graph takes the
residuals and the output cotangents and returns the input cotangents. Which forward values
are saved as residuals and which the backward recomputes is a minimum cut, as in PyTorch's
`min_cut_rematerialization_partition`:

* every forward value `v` becomes two flow nodes `v_in -> v_out` whose capacity is the cost of
  saving `v` (its bytes), so cutting that edge means "save v";
* data edges `u_out -> v_in` have infinite capacity: a recomputed value needs its inputs, saved
  or recomputed;
* `source -> v_in` (infinite) for the primal inputs and for values that must not be
  recomputed (matmul, random, and at high budgets reductions and gathers);
* `v_out -> sink` (infinite) for forward values the backward nodes read.

The source side of the minimum cut is computed in the forward, the sink side is recomputed in
the backward, and the cut edges are the residuals. Every capacity is an integer and the cut is
the set reachable from the source in the final residual network, which is the same for every
maximum flow: the partition is deterministic.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from tracejit.errors import InternalError
from tracejit.ir.graph import Graph, Node, Value, dependents
from tracejit.ir.primitives import CONTROL, GATHER, MATMUL, RANDOM, REDUCTION
from tracejit.ir.remat import checkpointed_values, region_outputs

# Never recomputed at any budget. Matmul is compute-bound: recomputing it costs as much as
# the forward. A random op recomputed in the backward would draw new bits for a stateful
# generator and silently corrupt the gradient (pytorch#190758); ours is counter-based, but we
# keep the rule so that correctness never hangs on that.
# A control-flow node (a whole loop) is never recomputed either: its residual outputs are
# what its VJP rule asked to save.
_NEVER_RECOMPUTE = (MATMUL, RANDOM, CONTROL)
# Recomputed only when the budget asks for less memory than the runtime-optimal cut: each one
# is a full extra pass over its (larger) input, unlike elementwise and layout ops, which the
# fuser folds into the backward kernels that consume them at no extra memory traffic.
_COSTLY_RECOMPUTE = (REDUCTION, GATHER)
# Capacity = bytes * _TIE_SCALE + distance tie-breaker: among cuts of equal bytes, prefer
# saving values close to their backward use (shorter recompute chains), as PyTorch does with
# its distance-from-backward weighting. The tie-breaker never outweighs one byte.
_TIE_SCALE = 1 << 12
_MAX_TIE = _TIE_SCALE - 1


@dataclass
class Partition:
    forward: Graph  # primal inputs -> outputs + residuals
    backward: Graph  # residuals + cotangents -> input cotangents
    residuals: list[Value]
    saved_bytes: int
    save_all_bytes: int


def partition(joint: Graph, n_primals: int, n_outputs: int, budget: float = 1.0) -> Partition:
    """Split `joint` (inputs: primals then cotangents; outputs: outputs then input cotangents).

    `budget` in [0, 1]: 1 keeps the runtime-optimal cut (recompute only elementwise and layout
    ops), 0 saves as little as possible (recompute everything but matmul and random ops), and
    values between ask for at most `S0 + budget * (S1 - S0)` saved bytes, reached by allowing
    the recomputation of the reductions and gathers whose outputs are largest first.
    """
    primals = joint.inputs[:n_primals]
    cotangents = joint.inputs[n_primals:]
    fwd_nodes, bwd_nodes = split_by_dependence(joint, set(cotangents))
    needed = _read_by_backward(joint, bwd_nodes, cotangents, n_outputs)
    costly = [n for n in fwd_nodes if n.prim.kind in _COSTLY_RECOMPUTE]
    net = _FlowProblem(primals, fwd_nodes, needed)
    saved = net.min_cut(banned=set(costly))
    if budget < 1.0 and costly:
        saved = _fit_budget(net, costly, saved, budget)
    residuals = _ordered_residuals(primals, fwd_nodes, saved)
    forward = _forward_graph(joint, primals, fwd_nodes, n_outputs, residuals)
    backward = _backward_graph(joint, residuals, cotangents, n_outputs)
    return Partition(
        forward=forward,
        backward=backward,
        residuals=residuals,
        saved_bytes=sum(v.nbytes for v in residuals),
        save_all_bytes=sum(v.nbytes for v in needed),
    )


def _fit_budget(net, costly: list[Node], saved: set[Value], budget: float) -> set[Value]:
    most = sum(v.nbytes for v in saved)
    least = sum(v.nbytes for v in net.min_cut(banned=set()))
    target = least + budget * (most - least)
    # Largest outputs first: unbanning them is what can free the most memory. Ties keep
    # topological order, so the sequence (and the result) is deterministic.
    order = sorted(range(len(costly)), key=lambda i: (-_node_bytes(costly[i]), i))
    if most <= target:
        return saved
    # Binary search for the shortest prefix of `order` whose recomputation meets the target:
    # O(log n) cuts instead of one per reduction. Unbanning everything (the budget-0 cut)
    # always meets it, so `hi` stays feasible.
    lo, hi = 0, len(order)
    best = None
    while lo < hi:
        mid = (lo + hi) // 2
        cut = net.min_cut(banned=set(costly) - {costly[i] for i in order[:mid]})
        if sum(v.nbytes for v in cut) <= target:
            hi, best = mid, cut
        else:
            lo = mid + 1
    return best if best is not None else net.min_cut(banned=set())


def _node_bytes(node: Node) -> int:
    return sum(v.nbytes for v in node.outputs)


def split_by_dependence(joint: Graph, cotangents: set[Value]):
    """Backward nodes are those that depend on a cotangent; the rest is forward."""
    tainted = dependents(joint.nodes, cotangents)
    bwd = [n for n in joint.nodes if any(v in tainted for v in n.inputs)]
    return [n for n in joint.nodes if not any(v in tainted for v in n.inputs)], bwd


def _read_by_backward(joint: Graph, bwd_nodes, cotangents, n_outputs: int) -> list[Value]:
    """Forward values (primal inputs included) that backward nodes or gradient outputs read."""
    bwd_values = {v for n in bwd_nodes for v in n.outputs}
    bwd_values.update(cotangents)
    seen: dict[Value, None] = {}
    for node in bwd_nodes:
        for v in node.inputs:
            if v not in bwd_values:
                seen.setdefault(v, None)
    for v in joint.outputs[n_outputs:]:  # a gradient that is a forward value (e.g. a zeros const)
        if v not in bwd_values:
            seen.setdefault(v, None)
    return list(seen)


class _FlowProblem:
    """The node-split flow network of the forward values; `min_cut` returns what to save."""

    def __init__(self, primals: list[Value], fwd_nodes: list[Node], needed: list[Value]):
        self.primals = primals
        self.fwd_nodes = fwd_nodes
        self.needed = set(needed)
        self.producer = {v: n for n in fwd_nodes for v in n.outputs}
        self.remat = checkpointed_values(fwd_nodes)
        self.kept = region_outputs(fwd_nodes)  # a checkpoint's outputs: saved, as in JAX
        self.distance = self._distance_to_backward()

    def _distance_to_backward(self) -> dict[Value, int]:
        """Edges from each forward value to the nearest value the backward reads."""
        users: dict[Value, list[Value]] = {}
        for n in self.fwd_nodes:
            for u in n.inputs:
                users.setdefault(u, []).extend(n.outputs)
        dist = {v: 0 for v in self.needed}
        order = self.primals + [v for n in self.fwd_nodes for v in n.outputs]
        for v in reversed(order):
            ds = [dist[w] + 1 for w in users.get(v, []) if w in dist]
            if v not in dist and ds:
                dist[v] = min(ds)
        return dist

    def min_cut(self, banned: set[Node]) -> set[Value]:
        values = self.primals + [v for n in self.fwd_nodes for v in n.outputs]
        index = {v: i for i, v in enumerate(values)}
        source, sink = 2 * len(values), 2 * len(values) + 1
        flow = _MaxFlow(2 * len(values) + 2)
        caps = [
            v.nbytes * _TIE_SCALE + min(self.distance.get(v, _MAX_TIE), _MAX_TIE) for v in values
        ]
        inf = sum(caps) + 1
        for v, i in index.items():
            node = self.producer.get(v)
            remat = v in self.remat  # in a tj.checkpoint region
            flow.add_edge(2 * i, 2 * i + 1, inf if remat else caps[i])
            tied = node is None or node in banned or node.prim.kind in _NEVER_RECOMPUTE
            tied = tied or v in self.kept
            if tied and not remat:  # a checkpointed value is recomputed whatever its kind
                flow.add_edge(source, 2 * i, inf)  # primal input, or computed in the forward
            if v in self.needed:
                flow.add_edge(2 * i + 1, sink, inf)
        for n in self.fwd_nodes:
            for u in n.inputs:
                if u in index:
                    for w in n.outputs:
                        flow.add_edge(2 * index[u] + 1, 2 * index[w], inf)
        reach = flow.source_side(source, sink)
        return {v for v, i in index.items() if 2 * i in reach and 2 * i + 1 not in reach}


class _MaxFlow:
    """Dinic's maximum flow over integer capacities, iterative (no recursion limit)."""

    def __init__(self, n: int):
        self.adj: list[list[int]] = [[] for _ in range(n)]
        self.to: list[int] = []
        self.cap: list[int] = []

    def add_edge(self, u: int, v: int, cap: int) -> None:
        self.adj[u].append(len(self.to))
        self.to.append(v)
        self.cap.append(cap)
        self.adj[v].append(len(self.to))
        self.to.append(u)
        self.cap.append(0)

    def _levels(self, s: int, t: int) -> list[int] | None:
        level = [-1] * len(self.adj)
        level[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for e in self.adj[u]:
                if self.cap[e] > 0 and level[self.to[e]] < 0:
                    level[self.to[e]] = level[u] + 1
                    queue.append(self.to[e])
        return level if level[t] >= 0 else None

    def _blocking_flow(self, s: int, t: int, level: list[int]) -> int:
        pointer = [0] * len(self.adj)
        total = 0
        while True:
            path, u = [], s  # path: edge ids from s
            while u != t:
                adj = self.adj[u]
                while pointer[u] < len(adj):
                    e = adj[pointer[u]]
                    if self.cap[e] > 0 and level[self.to[e]] == level[u] + 1:
                        break
                    pointer[u] += 1
                if pointer[u] == len(adj):  # dead end: retreat
                    if not path:
                        return total
                    level[u] = -1
                    e = path.pop()
                    u = self.to[e ^ 1]
                    pointer[u] += 1
                    continue
                e = adj[pointer[u]]
                path.append(e)
                u = self.to[e]
            pushed = min(self.cap[e] for e in path)
            for e in path:
                self.cap[e] -= pushed
                self.cap[e ^ 1] += pushed
            total += pushed

    def source_side(self, s: int, t: int) -> set[int]:
        """Run max flow, then return the vertices reachable from `s` in the residual network."""
        while (level := self._levels(s, t)) is not None:
            self._blocking_flow(s, t, level)
        seen, stack = {s}, [s]
        while stack:
            u = stack.pop()
            for e in self.adj[u]:
                if self.cap[e] > 0 and self.to[e] not in seen:
                    seen.add(self.to[e])
                    stack.append(self.to[e])
        return seen


def _ordered_residuals(primals: list[Value], fwd_nodes: list[Node], saved: set[Value]):
    order = primals + [v for n in fwd_nodes for v in n.outputs]
    return [v for v in order if v in saved]


def needed_nodes(nodes: list[Node], targets: list[Value], available=frozenset()) -> list[Node]:
    """The nodes (in order) needed to compute `targets` from `available`."""
    want: set[int] = set()
    live = set(targets)
    for node in reversed(nodes):
        if any(v in live and v not in available for v in node.outputs):
            want.add(id(node))
            live.update(node.inputs)
    return [n for n in nodes if id(n) in want]


def _forward_graph(joint, primals, fwd_nodes, n_outputs, residuals) -> Graph:
    outputs = joint.outputs[:n_outputs] + residuals
    effects = [n for n in fwd_nodes if not n.outputs]  # tj.debug.print: kept, with its inputs
    needed = needed_nodes(fwd_nodes, outputs + [v for n in effects for v in n.inputs], set(primals))
    keep = {id(n) for n in needed + effects}
    return Graph(list(primals), [n for n in fwd_nodes if id(n) in keep], outputs)


def _backward_graph(joint, residuals, cotangents, n_outputs) -> Graph:
    outputs = joint.outputs[n_outputs:]
    available = set(residuals) | set(cotangents)
    nodes = needed_nodes(joint.nodes, outputs, available)
    missing = (
        {v for n in nodes for v in n.inputs} - available - {v for n in nodes for v in n.outputs}
    )
    if missing:
        raise InternalError(f"partition bug: backward reads unsaved values {missing}")
    return Graph(list(residuals) + list(cotangents), nodes, outputs)


__all__ = ["Partition", "needed_nodes", "partition", "split_by_dependence"]
