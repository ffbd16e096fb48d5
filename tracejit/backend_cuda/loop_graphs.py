"""A `scan` on CUDA replayed as one CUDA graph: no Python per iteration.

A scan's trip count is static, and its body needs nothing from the host between iterations,
so every launch of the whole loop can be issued once into a capturing stream. `ScanLoop`
presents the loop to `GraphRunner` (graphs.py) as one launchable unit: `start(inputs)`
builds every iteration's call state ahead of time (the carry ping-pongs between two buffers,
iteration 0 reads the initial carry, the last writes the final carry, `xs[t]` and `ys[t]` are
views of the loop's own inputs and outputs, and all iterations share one arena, as they run
in order), `launch(call)` issues them, `run_plain(inputs)` does both at once. GraphRunner then
captures, checks the replay bit for bit against plain launches, measures under
`tj.config.cuda_graphs = "auto"`, and replays with copies in and out.

Loops it does not take: a zero-length scan, and a body GraphRunner would not capture (a host
step, a cuBLAS matmul, a nested loop), or one whose unrolled graph would exceed MAX_NODES
launches or MAX_BYTES of buffers. They run as before, one Python-driven iteration at a time.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from tracejit.backend_cuda.graphs import MAX_BYTES, GraphRunner

MAX_NODES = 20000  # launches in one loop graph: capture time and graph memory stay small


class ScanLoop:
    """One scan (its compiled body and static attributes) as a unit for GraphRunner."""

    def __init__(self, body, attrs: dict, name: str):
        self.body = body
        self.cupy = body.cupy
        self.name = f"{name} (scan loop)"
        self.attrs = attrs
        length, n_fixed = attrs["length"], attrs["n_consts"] + attrs["n_carry"]
        ins = [body.buffers[b] for b in body.schedule.inputs]
        outs = [body.buffers[b] for b in body.schedule.outputs]
        n_carry = attrs["n_carry"]
        in_specs = [(b.shape, b.dtype) for b in ins[:n_fixed]]
        in_specs += [((length, *b.shape), b.dtype) for b in ins[n_fixed:]]
        self.out_specs = [(b.shape, b.dtype) for b in outs[:n_carry]]
        self.out_specs += [((length, *b.shape), b.dtype) for b in outs[n_carry:]]
        # GraphRunner's view of an executable: its inputs' buffers by id
        self.buffers = {i: SimpleNamespace(shape=s, dtype=d) for i, (s, d) in enumerate(in_specs)}
        self.schedule = SimpleNamespace(inputs=list(range(len(in_specs))))

    def nbytes(self) -> int:
        specs = [(b.shape, b.dtype) for b in self.buffers.values()] + self.out_specs
        total = sum(math.prod(s) * d.itemsize for s, d in specs)
        carry = sum(math.prod(s) * d.itemsize for s, d in self.out_specs[: self.attrs["n_carry"]])
        return total + 2 * carry + self.body.schedule.arena_bytes

    def start(self, ins):
        a, cupy = self.attrs, self.cupy
        n_consts, n_carry, length = a["n_consts"], a["n_carry"], a["length"]
        consts, carry, xs = (
            ins[:n_consts],
            ins[n_consts : n_consts + n_carry],
            ins[n_consts + n_carry :],
        )
        outs = [cupy.empty(s, d) for s, d in self.out_specs]
        final, ys = outs[:n_carry], outs[n_carry:]
        ping = [[cupy.empty(c.shape, c.dtype) for c in carry] for _ in range(2)]
        arena_bytes = self.body.schedule.arena_bytes
        arena = cupy.cuda.alloc(arena_bytes) if arena_bytes else None
        calls, src = [], carry
        for it in range(length):
            t = length - 1 - it if a["reverse"] else it
            dst = final if it == length - 1 else ping[it % 2]
            args = [*consts, *src, *(x[t] for x in xs)]
            calls.append(self.body.start(args, [*dst, *(y[t] for y in ys)], arena))
            src = dst
        return SimpleNamespace(outputs=outs, calls=calls)

    def launch(self, call) -> None:
        for c in call.calls:
            self.body.launch(c)

    def run_plain(self, ins) -> list:
        call = self.start(ins)
        self.launch(call)
        return call.outputs


def scan_runner(body, attrs: dict, name: str) -> GraphRunner | None:
    """A GraphRunner replaying the whole scan, or None where the loop cannot be one graph."""
    from tracejit.backend_cuda.launcher import step_kinds  # launcher imports this module

    kinds = step_kinds(body)
    length = attrs["length"]
    if length < 1 or not kinds or length * len(kinds) > MAX_NODES:
        return None
    loop = ScanLoop(body, attrs, name)
    if not GraphRunner.eligible_steps(kinds * length, min(loop.nbytes(), MAX_BYTES + 1)):
        return None
    return GraphRunner(loop)


__all__ = ["MAX_NODES", "ScanLoop", "scan_runner"]
