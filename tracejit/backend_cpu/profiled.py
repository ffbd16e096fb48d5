"""A CPU call while `tj.profile` records: each top-level step of `tj_run` timed in C++.

The generated library exports its step names (`tj_run_step_names`, `tj_run_nsteps`); the
executor's `run_profiled` hands `tj_run` room for a start and a duration per step
(`TjContext.step_ns`, on CLOCK_MONOTONIC), and each timed step becomes a "kernel" event of the
profile, on the same clock as the call that contains it.
"""

from __future__ import annotations

import ctypes
import functools
import time

from tracejit import timing


@functools.lru_cache(maxsize=256)
def step_names(library: str) -> tuple[str, ...]:
    """The names of the steps `tj_run` of `library` runs, in order."""
    lib = ctypes.CDLL(library)  # already loaded by the executor: the same handle
    n = ctypes.c_int64.in_dll(lib, "tj_run_nsteps").value
    names = (ctypes.c_char_p * max(n, 1)).in_dll(lib, "tj_run_step_names")
    return tuple(names[i].decode() for i in range(n))


def _clock_offset() -> float:
    """perf_counter seconds minus CLOCK_MONOTONIC seconds (0 on Linux, where they agree)."""
    return time.perf_counter() - time.clock_gettime(time.CLOCK_MONOTONIC)


def run_profiled(executor, library: str, args, outs=None) -> list:
    """Run `executor` on `args` (writing into `outs`, when donated), adding one event per
    step to the running profile."""
    names = step_names(library)
    outputs, ns = executor.run_profiled(args, len(names), outs)
    offset, events = _clock_offset(), timing.events
    for i, name in enumerate(names):
        start, duration = ns[2 * i] * 1e-9 + offset, ns[2 * i + 1] * 1e-9
        if events is not None:
            events.append(("kernel", name, start, start + duration, {}))
    return outputs
