"""Which outputs of a schedule may be written into the buffers of donated inputs.

`jit(f, donate_argnums=...)` lets a call overwrite a donated argument: an output of the same
shape and dtype is then written into that argument's memory instead of a fresh array. That
is safe when nothing reads the input after the output's first write: the input's last
reader (its views included) runs strictly before the step that writes the output, or is
that very step, a kernel reading the input exactly at the addresses it writes (the test the
memory plan uses to put a temporary in place of a dying one).

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> from tracejit.ir.memory import plan_memory
>>> s = plan_memory(fuse(tj.make_ir(lambda p, g: p - 0.1 * g)(np.ones(3), np.ones(3))))
>>> alias_plan(s, [0])  # the update may overwrite p (input 0) with output 0
{0: 0}
"""

from __future__ import annotations

from collections.abc import Sequence

from tracejit.ir import kernel as K
from tracejit.ir.memory import _in_place_source, _lifetimes


def alias_plan(schedule: K.Schedule, donated: Sequence[int]) -> dict[int, int]:
    """{output index: donated input index} for the outputs that can reuse a donated input."""
    buffers = {b.id: b for b in schedule.buffers}
    first, last = _lifetimes(schedule)
    plan: dict[int, int] = {}
    free = [i for i in sorted(set(donated)) if 0 <= i < len(schedule.inputs)]
    for k, out_id in enumerate(schedule.outputs):
        out = buffers[out_id]
        if out.kind != "output" or out_id in schedule.outputs[:k] or out_id not in first:
            continue
        write = first[out_id]
        for i in free:
            inp = buffers[schedule.inputs[i]]
            if (inp.shape, inp.dtype) != (out.shape, out.dtype) or inp.id in schedule.outputs:
                continue
            read = last.get(inp.id, -1)
            if read < write or (
                read == write
                and _in_place_source(schedule.steps[write], out, {inp.id}, buffers) == inp.id
            ):
                plan[k] = i
                free.remove(i)
                break
    return plan


__all__ = ["alias_plan"]
