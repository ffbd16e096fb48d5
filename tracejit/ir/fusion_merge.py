"""Kernel groups during fusion and the greedy merging of groups into bigger kernels.

A `Group` is a set of materialized values (stores) and reductions that will share one loop
nest; `Steps` is the step graph (groups plus library/fallback steps) during merging. Two
groups merge when the merged group still builds (every reduction result it reads inside is
read at its own row) and the step graph stays acyclic. `fusion.fuse` drives it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracejit.ir import kernel as K
from tracejit.ir.graph import Node, Value


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


@dataclass
class Other:
    """A non-kernel step: matmul, view or fallback."""

    node: Node
    kind: str
    order: int
    reads: list[Value]
    trans: tuple[bool, bool] = (False, False)


class Steps:
    """The step graph during merging: groups and other steps, with cached reads.

    `f` is the fusion driver (`fusion._Fuser`): it builds groups and knows node order.
    """

    def __init__(self, f, groups: list[Group], others: list[Other]):
        self.f = f
        self.groups = groups
        self.others = others
        self.read_cache: dict[Group, set[Value]] = {}  # keyed by identity

    def reads(self, item) -> set[Value]:
        if isinstance(item, Other):
            return set(item.reads)
        if item not in self.read_cache:
            self.read_cache[item] = self.f.reads(item)
        return self.read_cache[item]

    @staticmethod
    def writes(item) -> list[Value]:
        if isinstance(item, Other):
            return list(item.node.outputs)
        if item.fixed is not None:
            return list(item.writes)
        return list(item.stores)

    def items(self) -> list:
        return [*self.groups, *self.others]

    def edges(self, items: list) -> dict[int, set[int]]:
        writer = {v: i for i, it in enumerate(items) for v in self.writes(it)}
        deps: dict[int, set[int]] = {i: set() for i in range(len(items))}
        for i, it in enumerate(items):
            for v in self.reads(it):
                w = writer.get(v)
                if w is not None and w != i:
                    deps[i].add(w)
        return deps

    def is_acyclic(self, items: list) -> bool:
        deps = self.edges(items)
        indegree = {i: len(d) for i, d in deps.items()}
        users: dict[int, list[int]] = {i: [] for i in deps}
        for i, d in deps.items():
            for w in d:
                users[w].append(i)
        ready = [i for i, n in indegree.items() if n == 0]
        seen = 0
        while ready:
            i = ready.pop()
            seen += 1
            for u in users[i]:
                indegree[u] -= 1
                if indegree[u] == 0:
                    ready.append(u)
        return seen == len(items)

    def try_merge(self, a: Group, b: Group, key: tuple) -> bool:
        merged = Group(
            key,
            stores=a.stores + [v for v in b.stores if v not in a.stores],
            reduces=sorted(a.reduces + b.reduces, key=self.f.order.__getitem__),
            order=min(a.order, b.order),
        )
        try:
            self.f.build(merged)
        except Invalid:
            return False
        items = [merged] + [it for it in self.items() if it is not a and it is not b]
        if not self.is_acyclic(items):
            return False
        self.groups = [g for g in self.groups if g is not a and g is not b] + [merged]
        self.groups.sort(key=lambda g: g.order)
        return True


def related(steps: Steps, a: Group, b: Group) -> bool:
    ra, rb = steps.reads(a), steps.reads(b)
    return bool(ra & set(b.stores) or rb & set(a.stores) or ra & rb)


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
    """Greedily merge related groups, reductions first, until nothing changes.

    A pair that failed to merge is not tried again after later merges: its merged kernel is
    still unbuildable (the pair's contents are unchanged), and a cycle through other steps
    survives merging them (contracting edges removes no path)."""
    failed: set[tuple[Group, Group]] = set()  # the pairs themselves: ids could be reused
    changed = True
    while changed:
        changed = False
        ordered = sorted(steps.groups, key=lambda g: (g.key[0] != "r", g.order))
        for a in ordered:
            for b in sorted(steps.groups, key=lambda g: g.order):
                if a is b or a not in steps.groups or b not in steps.groups:
                    continue
                if (a, b) in failed:
                    continue
                key = merge_key(a, b)
                if key is None or not related(steps, a, b):
                    continue
                if steps.try_merge(a, b, key):
                    changed = True
                    break
                failed.add((a, b))
            if changed:
                break


def drop_internal(steps: Steps, outputs: set[Value]) -> None:
    """Values read only inside the group that computes them need no buffer."""
    for g in steps.groups:
        if g.fixed is not None:
            continue
        read_elsewhere = set()
        for it in steps.items():
            if it is not g:
                read_elsewhere |= steps.reads(it)
        keep = [v for v in g.stores if v in outputs or v in read_elsewhere]
        for v in g.stores:
            if v not in keep:
                steps.f.materialized.discard(v)
        g.stores = keep
        steps.read_cache.pop(g, None)


__all__ = ["Group", "Invalid", "Other", "Steps", "drop_internal", "merge"]
