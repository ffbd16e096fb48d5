"""Kernel groups during fusion and the greedy merging of groups into bigger kernels.

A `Group` is a set of materialized values (stores) and reductions that will share one loop
nest; `Steps` is the step graph (groups plus library/fallback steps) during merging. Two
groups merge when the merged group still builds (every reduction result it reads inside is
read at its own row) and the step graph stays acyclic. `fusion.fuse` drives it.

Merging is near-linear in the number of steps (issue 10): `Steps` keeps the step graph
incrementally (who writes and who reads each value, a topological order) instead of
rebuilding it for every tentative merge, and a pair is checked for a cycle in two stages:

1. a static filter over reachability bitsets of the initial step graph (Python ints, one bit
   per initial step). Merging only adds paths, so a path between two steps' members in the
   initial graph is a path forever: such pairs are rejected by a few integer operations. The
   same bitsets select the siblings (groups sharing an input) that can merge at all, so an
   input read by every step of an unrolled loop does not make every pair a candidate.
2. an exact search from the earlier step, over steps before the later one in the current
   topological order (no path can leave that window).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from tracejit.errors import InternalError
from tracejit.ir import kernel as K
from tracejit.ir.graph import Node, Value

# At most this many stores plus reductions per kernel. An unrolled loop makes groups that
# could otherwise grow without bound (every step's slice of one input, every step's share of
# a gradient): each merge rebuilds the group, so unbounded growth costs quadratic time, and
# the C++ compiler's time and the kernel's register and scratch pressure grow with its width.
MAX_GROUP = 32
# At most this many distinct buffers read per kernel (a bound fusion.py also puts on inlined
# expressions). The gradient of a weight shared by every step of an unrolled loop is a sum
# with one term per step: as one kernel it read 800 buffers at 800 steps, and the C++
# compiler's time on such a function grows faster than its size (alias walking, SLP,
# dead-store elimination: 1.4 s for the 400-step RNN's unit, 5.5 s at 800).
MAX_READS = 64


class Invalid(Exception):
    """A tentative kernel is not expressible (a reduction result read at another index)."""


@dataclass(eq=False)
class Group:
    key: tuple  # ("e", shape) or ("r", in_shape, axes)
    stores: list[Value] = field(default_factory=list)
    reduces: list[Node] = field(default_factory=list)
    order: int = 0  # position of its first node in the graph (for a stable schedule)
    fixed: list[K.Kernel] | None = None  # prebuilt kernels (concatenate / pad)
    writes: list[Value] = field(default_factory=list)  # fixed groups: the values written
    reads: list[Value] = field(default_factory=list)  # fixed groups: the values read


@dataclass(eq=False)
class Other:
    """A non-kernel step: matmul, view or fallback."""

    node: Node
    kind: str
    order: int
    reads: list[Value]


def _writes(item) -> list[Value]:
    if isinstance(item, Other):
        return list(item.node.outputs)
    if item.fixed is not None:
        return list(item.writes)
    return list(item.stores)


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class Steps:
    """The step graph during merging: groups and other steps, kept up to date incrementally.

    `f` is the fusion driver (`fusion._Fuser`): it builds groups and knows node order.
    """

    def __init__(self, f, groups: list[Group], others: list[Other]):
        self.f = f
        self.alive: dict = {}  # item -> None, in creation order
        self.read_sets: dict = {}
        self.writer: dict[Value, object] = {}
        self.readers: dict[Value, set] = {}
        for it in [*groups, *others]:
            self._add(it, set(it.reads) if isinstance(it, Other) else f.reads(it))
        self.topo: list = self.topological()
        self.pos = {it: i for i, it in enumerate(self.topo)}
        self._init_reachability()

    # -- the graph
    def _add(self, item, reads: set[Value]) -> None:
        self.alive[item] = None
        self.read_sets[item] = reads
        for v in reads:
            self.readers.setdefault(v, set()).add(item)
        for v in _writes(item):
            self.writer[v] = item

    def _remove(self, item) -> None:
        del self.alive[item]
        for v in self.read_sets.pop(item):
            self.readers[v].discard(item)

    def reads(self, item) -> set[Value]:
        return self.read_sets[item]

    @property
    def groups(self) -> list[Group]:
        return [it for it in self.alive if isinstance(it, Group)]

    def items(self) -> list:
        return list(self.alive)

    def succ(self, item) -> set:
        out = {r for v in _writes(item) for r in self.readers.get(v, ())}
        out.discard(item)
        return out

    def pred(self, item) -> set:
        out = {self.writer[v] for v in self.read_sets[item] if v in self.writer}
        out.discard(item)
        return out

    def topological(self) -> list:
        """Every live step, producers first; among ready steps, the lowest `order` first."""
        deps = {it: self.pred(it) for it in self.alive}
        users: dict = {it: [] for it in self.alive}
        for it, ds in deps.items():
            for d in ds:
                users[d].append(it)
        count = {it: len(ds) for it, ds in deps.items()}
        seq = {it: i for i, it in enumerate(self.alive)}
        ready = [(it.order, seq[it], it) for it, n in count.items() if n == 0]
        heapq.heapify(ready)
        out = []
        while ready:
            _, _, it = heapq.heappop(ready)
            out.append(it)
            for u in users[it]:
                count[u] -= 1
                if count[u] == 0:
                    heapq.heappush(ready, (u.order, seq[u], u))
        if len(out) != len(deps):  # pragma: no cover - merging keeps the graph acyclic
            raise InternalError("step graph has a cycle")
        return out

    # -- reachability in the initial graph (lower bounds once groups merge)
    def _init_reachability(self) -> None:
        # Bits in `order` rank: a group's lowest member bit is its own order's rank, so
        # scanning bits upwards meets groups in order (see `candidates`).
        ranked = sorted(self.topo, key=lambda it: it.order)
        self.mask = {it: 1 << i for i, it in enumerate(ranked)}
        self.member = ranked  # initial bit -> its item, updated as groups merge
        self.closed = 0  # bits of groups too big to merge with anything (MAX_GROUP)
        self.desc: dict = {}
        self.anc: dict = {}
        for it in reversed(self.topo):
            d = 0
            for s in self.succ(it):
                d |= self.desc[s] | self.mask[s]
            self.desc[it] = d
        for it in self.topo:
            a = 0
            for p in self.pred(it):
                a |= self.anc[p] | self.mask[p]
            self.anc[it] = a
        self.reader_mask: dict[Value, int] = {}
        for v, rs in self.readers.items():
            m = 0
            for r in rs:
                m |= self.mask[r]
            self.reader_mask[v] = m

    def candidates(self, a: Group):
        """Groups related to `a` (producer, consumer, or sharing an input) that the initial
        graph's reachability does not already rule out, by `order`, lazily: the merge loop
        stops at the first that merges, so an input read by every step of an unrolled loop
        is not scanned in full for every merge."""
        if _size(a) >= MAX_GROUP:
            return
        near = sorted(
            (b for b in self.pred(a) | self.succ(a) if isinstance(b, Group)),
            key=lambda b: b.order,
        )
        siblings = 0
        for v in self.read_sets[a]:
            siblings |= self.reader_mask.get(v, 0)
        siblings &= ~(self.mask[a] | self.desc[a] | self.anc[a] | self.closed)
        by_rank = (self.member[i] for i in _bits(siblings))
        seen = {a}
        for b in heapq.merge(near, by_rank, key=lambda b: b.order):
            if b not in seen and isinstance(b, Group) and b in self.alive:
                seen.add(b)
                yield b

    def _static_cycle(self, x, y) -> bool:
        """A path x -> s -> ... -> y (s != y) in the initial graph (x before y)."""
        target = self.mask[y]
        return any(self.desc[s] & target for s in self.succ(x) if s is not y)

    def _window(self, x, y) -> tuple[bool, set] | None:
        """Steps strictly between x and y in topological order that must move for them to
        merge: (True, x's descendants there) or (False, y's ancestors there), whichever
        search finishes first; None if a path x -> s -> ... -> y exists (a cycle)."""
        lo, hi = self.pos[x], self.pos[y]
        down = _Search(self.succ, x, y, lambda s: self.pos[s] < hi)
        up = _Search(self.pred, y, x, lambda s: self.pos[s] > lo)
        while True:
            for search, forward in ((down, True), (up, False)):
                state = search.step()
                if state is None:
                    return None
                if state:
                    return forward, search.seen

    # -- merging
    def try_merge(self, a: Group, b: Group, key: tuple) -> Group | None:
        x, y = (a, b) if self.pos[a] < self.pos[b] else (b, a)
        if self._static_cycle(x, y):
            return None
        merged = Group(
            key,
            stores=a.stores + [v for v in b.stores if v not in a.stores],
            reduces=sorted(a.reduces + b.reduces, key=self.f.order.__getitem__),
            order=min(a.order, b.order),
        )
        window = self._window(x, y)
        if window is None:
            return None
        if key[0] == "e" and not merged.reduces:  # builds always; loads what a and b loaded
            reads = (self.read_sets[a] | self.read_sets[b]) - set(merged.stores)
        else:
            try:
                reads = self.f.build_reads(merged)
            except Invalid:
                return None
        self._replace(x, y, merged, reads, window)
        return merged

    def _replace(self, x, y, m: Group, reads: set[Value], window: tuple[bool, set]) -> None:
        lo, hi = self.pos[x], self.pos[y]
        self._remove(x)
        self._remove(y)
        self._add(m, reads)
        self.mask[m] = self.mask[x] | self.mask[y]
        self.desc[m] = (self.desc[x] | self.desc[y]) & ~self.mask[m]
        self.anc[m] = (self.anc[x] | self.anc[y]) & ~self.mask[m]
        for i in _bits(self.mask[m]):
            self.member[i] = m
        low = self.mask[m] & -self.mask[m]  # the merged group's own order rank
        for v in reads:
            self.reader_mask[v] = self.reader_mask.get(v, 0) | low
        if _size(m) >= MAX_GROUP:
            self.closed |= self.mask[m]
        # Between x and y, x's descendants go after the merged step and y's ancestors before
        # it (no step is both: that would be a cycle); the others keep their side.
        after, found = window
        segment = [it for it in self.topo[lo + 1 : hi] if it is not None]
        moved = [it for it in segment if it in found]
        kept = [it for it in segment if it not in found]
        middle = kept + [m] + moved if after else moved + [m] + kept
        new = [None] * (hi - lo + 1 - len(middle)) + middle
        self.topo[lo : hi + 1] = new
        for i, it in enumerate(new, lo):
            if it is not None:
                self.pos[it] = i
        self.pos.pop(x)
        self.pos.pop(y)


class _Search:
    """A depth-first search from `start`'s neighbours (not `target` itself) over the steps
    that `inside` admits, one step at a time: `step()` is True when done without reaching
    `target`, None when it reached it (through another step), False while running."""

    def __init__(self, neighbours, start, target, inside):
        self.neighbours = neighbours
        self.target = target
        self.inside = inside
        self.seen: set = set()
        self.stack = [s for s in neighbours(start) if s is not target]

    def step(self) -> bool | None:
        while self.stack:
            s = self.stack.pop()
            if s is self.target:
                return None
            if s in self.seen or not self.inside(s):
                continue
            self.seen.add(s)
            self.stack.extend(self.neighbours(s))
            return False
        return True


def merge_key(a: Group, b: Group) -> tuple | None:
    """The key of the merged group if `a` and `b` can share a loop nest, else None."""
    if a.fixed is not None or b.fixed is not None:
        return None
    if a.key == b.key:
        return a.key
    for r, e in ((a, b), (b, a)):
        if r.key[0] == "r" and e.key[0] == "e":
            shape, axes = r.key[1], r.key[2]
            kept = tuple(d for i, d in enumerate(shape) if i not in axes)
            if e.key[1] in (tuple(shape), kept):
                return r.key
    return None


def merge(steps: Steps) -> None:
    """Greedily merge related groups, reductions first, then in graph order.

    The group first in that priority tries its related groups in order and merges with the
    first that works; the merged group goes back into the queue. A pair that failed is not
    tried again: its merged kernel is still unbuildable (the pair's contents are unchanged),
    and a cycle through other steps survives merging them (contracting edges removes no
    path)."""
    failed: set[tuple[Group, Group]] = set()  # the pairs themselves: ids could be reused
    queue: list = []
    seq = 0

    def push(g: Group) -> None:
        nonlocal seq
        heapq.heappush(queue, (g.key[0] != "r", g.order, seq, g))
        seq += 1

    for g in steps.groups:
        push(g)
    while queue:
        a = heapq.heappop(queue)[-1]
        if a not in steps.alive:
            continue
        for b in steps.candidates(a):
            if (a, b) in failed:
                continue
            key = merge_key(a, b)
            if key is None or _size(a) + _size(b) > MAX_GROUP:
                continue
            if len(steps.read_sets[a] | steps.read_sets[b]) > MAX_READS:
                continue
            merged = steps.try_merge(a, b, key)
            if merged is not None:
                push(merged)
                break
            failed.add((a, b))
            failed.add((b, a))


def _size(g: Group) -> int:
    return len(g.stores) + len(g.reduces)


def drop_internal(steps: Steps, outputs: set[Value]) -> None:
    """Values read only inside the group that computes them need no buffer."""
    for g in steps.groups:
        if g.fixed is not None:
            continue
        keep = [v for v in g.stores if v in outputs or steps.readers.get(v, set()) - {g}]
        for v in g.stores:
            if v not in keep:
                steps.f.materialized.discard(v)
        g.stores = keep


__all__ = ["MAX_READS", "Group", "Invalid", "Other", "Steps", "drop_internal", "merge"]
