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


def _root(buffers: dict[int, K.Buffer], b: int) -> int:
    while buffers[b].kind == "view":
        b = buffers[b].base
    return b


def _lifetimes(schedule: K.Schedule) -> tuple[dict[int, int], dict[int, int]]:
    buffers = {b.id: b for b in schedule.buffers}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, step in enumerate(schedule.steps):
        reads, writes = step_io(step)
        if isinstance(step, K.View):
            writes = {step.dst}
        for b in writes:
            first.setdefault(_root(buffers, b), i)
        for b in reads | writes:
            last[_root(buffers, b)] = i
    return first, last


def _in_place_source(step: K.Step, buf: K.Buffer, dying: set[int], buffers) -> int | None:
    """A temp dying at `step` that `step` reads at exactly the addresses it writes `buf`."""
    if not isinstance(step, K.Kernel):
        return None
    stores = [s for s in step.stores if s.buf == buf.id]
    if len(stores) != 1:
        return None
    store = stores[0]
    for cand in dying:
        other = buffers[cand]
        if other.nbytes != buf.nbytes or other.dtype.itemsize != buf.dtype.itemsize:
            continue
        loads = [ld for ld in step.loads() if ld.buf == cand]
        if any(s.buf == cand for s in step.stores):
            continue
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
    return None


def plan_memory(schedule: K.Schedule) -> K.Schedule:
    """Assign arena offsets to the temporaries of `schedule` (in place); returns it."""
    with timing.phase("memory"):
        return _plan(schedule)


def _plan(schedule: K.Schedule) -> K.Schedule:
    buffers = {b.id: b for b in schedule.buffers}
    first, last = _lifetimes(schedule)
    live: dict[int, tuple[int, int]] = {}  # root -> (offset, size)
    arena = 0
    for i, step in enumerate(schedule.steps):
        dying = {b for b, (_, _) in live.items() if last.get(b, -1) == i}
        for b in sorted(b for b, s in first.items() if s == i):
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
            buf.offset = _first_fit(live, size)
            live[b] = (buf.offset, size)
            arena = max(arena, buf.offset + size)
        for b in [b for b in live if last.get(b, -1) <= i]:
            del live[b]
    schedule.arena_bytes = arena
    return schedule


def _first_fit(live: dict[int, tuple[int, int]], size: int) -> int:
    offset = 0
    for start, length in sorted(live.values()):
        if start - offset >= size:
            return offset
        offset = max(offset, start + length)
    return offset


__all__ = ["ALIGN", "plan_memory", "step_io"]
