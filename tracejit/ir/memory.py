"""The memory plan: every temporary buffer gets an offset in one arena, by lifetime.

Inputs, constants and outputs live outside the arena (outputs are fresh arrays the caller
owns). A temporary lives from the step that writes it to the last step that reads it or a
view of it. Offsets are chosen first-fit among the blocks live at the same time, so buffers
whose lifetimes do not overlap share memory; a kernel whose store reads a dying temporary at
exactly the addresses it writes reuses that temporary's block (in place).

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> s = plan_memory(fuse(tj.make_ir(lambda x: x @ x + 1.0)(np.ones((2, 2), np.float32))))
>>> s.arena_bytes
64
"""

from __future__ import annotations

import bisect
import heapq

from tracejit import timing
from tracejit.ir import kernel as K

ALIGN = 64  # one cache line: every block starts aligned for vector loads


def _round_up(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def step_io(step: K.Step) -> tuple[set[int], set[int]]:
    """(buffers read, buffers written) by one step."""
    if isinstance(step, K.Kernel):
        return {ld.buf for ld in step.loads()}, {s.buf for s in step.stores}
    if isinstance(step, K.Matmul):
        return {step.a, step.b}, {step.out}
    if isinstance(step, K.Fallback):
        return set(step.inputs), set(step.outputs)
    return {step.src}, set()  # a view aliases: it writes nothing


def _lifetimes(schedule: K.Schedule) -> tuple[dict[int, int], dict[int, int]]:
    buffers = {b.id: b for b in schedule.buffers}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, step in enumerate(schedule.steps):
        reads, writes = step_io(step)
        if isinstance(step, K.View):
            writes = {step.dst}
        for b in writes:
            first.setdefault(K.root(buffers, b), i)
        for b in reads | writes:
            last[K.root(buffers, b)] = i
    return first, last


def _in_place_source(step: K.Step, buf: K.Buffer, dying: set[int], buffers) -> int | None:
    """A temp dying at `step` that `step` reads at exactly the addresses it writes `buf`."""
    if not isinstance(step, K.Kernel):
        return None
    stores = [s for s in step.stores if s.buf == buf.id]
    if len(stores) != 1:
        return None
    store = stores[0]
    fits = [
        cand
        for cand in dying
        if buffers[cand].nbytes == buf.nbytes
        and buffers[cand].dtype.itemsize == buf.dtype.itemsize
        and not any(s.buf == cand for s in step.stores)
    ]
    if not fits:
        return None
    by_buf: dict[int, list[K.Load]] = {}  # the kernel's loads, walked once (not per candidate)
    for ld in step.loads():
        by_buf.setdefault(ld.buf, []).append(ld)
    for cand in fits:  # in the order `dying` gives (the plan is unchanged)
        loads = by_buf.get(cand, [])
        same = loads and all(
            (ld.offset, ld.strides) == (store.offset, store.strides) for ld in loads
        )
        if same and not _read_after(step, cand, store.phase):
            return cand
    return None


def _read_after(kernel: K.Kernel, buf: int, phase: int) -> bool:
    """Whether a phase after `phase` (or the epilogue) still reads `buf`: a row kernel reads
    its row again in each phase, so writing over it earlier would corrupt the later reads."""
    later = [r.expr for r in kernel.reductions if r.phase > phase]
    later += [s.expr for s in kernel.stores if s.phase > phase or (s.phase == -1 and phase >= 0)]
    return any(isinstance(e, K.Load) and e.buf == buf for root in later for e in K.walk(root))


def plan_memory(schedule: K.Schedule) -> K.Schedule:
    """Assign arena offsets to the temporaries of `schedule` (in place); returns it."""
    with timing.phase("memory"):
        return _plan(schedule)


def _plan(schedule: K.Schedule) -> K.Schedule:
    buffers = {b.id: b for b in schedule.buffers}
    first, last = _lifetimes(schedule)
    starts: dict[int, list[int]] = {}
    for b, s in sorted(first.items()):
        starts.setdefault(s, []).append(b)
    ends: dict[int, list[int]] = {}
    for b, s in last.items():
        ends.setdefault(s, []).append(b)
    live: dict[int, tuple[int, int]] = {}  # root -> (offset, size)
    blocks = _Blocks()
    arena = 0
    for i, step in enumerate(schedule.steps):
        dying = {b for b in ends.get(i, ()) if b in live}
        for b in starts.get(i, ()):
            buf = buffers[b]
            if buf.kind != "temp":
                continue
            src = _in_place_source(step, buf, dying, buffers)
            if src is not None:
                buf.offset = live[src][0]
                live[b] = live.pop(src)
                dying.discard(src)
                continue
            size = _round_up(max(buf.nbytes, 1))
            buf.offset = blocks.first_fit(size)
            blocks.insert(buf.offset, size)
            live[b] = (buf.offset, size)
            arena = max(arena, buf.offset + size)
        for b in ends.get(i, ()):
            if b in live:
                blocks.remove(live.pop(b)[0])
    schedule.arena_bytes = arena
    return schedule


class _Blocks:
    """The live blocks of the arena (disjoint) and the holes between them.

    `first_fit(size)` is the lowest offset where `size` bytes fit: the first hole at least
    that long, else the end of the last block. Holes are indexed by length (a heap of offsets
    per length), so a query costs the number of distinct hole lengths, not of live blocks."""

    def __init__(self):
        self.starts: list[int] = []  # sorted
        self.end: dict[int, int] = {}  # block start -> its end
        self.holes: dict[int, int] = {}  # hole start -> its length
        self.by_length: dict[int, list[int]] = {}  # length -> heap of hole starts (lazy)

    def _add_hole(self, start: int, length: int) -> None:
        if length > 0:
            self.holes[start] = length
            heapq.heappush(self.by_length.setdefault(length, []), start)

    def first_fit(self, size: int) -> int:
        best = None
        for length in [n for n in self.by_length if n >= size]:
            heap = self.by_length[length]
            while heap and self.holes.get(heap[0]) != length:
                heapq.heappop(heap)
            if not heap:
                del self.by_length[length]
            elif best is None or heap[0] < best:
                best = heap[0]
        if best is not None:
            return best
        return self.end[self.starts[-1]] if self.starts else 0

    def insert(self, start: int, size: int) -> None:
        """Take [start, start + size): the start of a hole or the end of the last block."""
        length = self.holes.pop(start, 0)
        self._add_hole(start + size, length - size)
        bisect.insort(self.starts, start)
        self.end[start] = start + size

    def remove(self, start: int) -> None:
        i = bisect.bisect_left(self.starts, start)
        before = self.end[self.starts[i - 1]] if i > 0 else 0
        end = self.end.pop(start)
        self.holes.pop(before, None)
        self.holes.pop(end, None)
        del self.starts[i]
        if i < len(self.starts):
            self._add_hole(before, self.starts[i] - before)


__all__ = ["ALIGN", "plan_memory", "step_io"]
