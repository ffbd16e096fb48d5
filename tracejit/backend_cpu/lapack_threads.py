"""OpenBLAS threads for one LAPACK call of the CPU program: several only when they can pay.

scipy-openblas32 is held to one thread (backend_cpu/blas.py): generated code calls its gemm
from the program's own thread pool. A LAPACK step (backend_cpu/lapack.py) runs between the
program's parallel loops, on the calling thread, so for its duration OpenBLAS may have
threads of its own. They pay only for big matrices and only on free cores: next to other
runnable tasks, OpenBLAS's threads wait for each other at every panel of the factorization
and a 2-thread call collapses (on the shared 2-core machine with 2-3 other running tasks, a
2048 `spotrf` took 45 ms on one thread and 148 ms on two, a 4096 `sgetrf` + `sgetrs` 373
against 660 ms; benchmarks/RESULTS.md). So a call gets
`min(T, cores - others)` threads, where T is the program's thread count (TRACEJIT_NUM_THREADS,
OMP_NUM_THREADS, else the usable cores, as cpp/pool.cpp) and `others` the running tasks of
/proc/loadavg besides this thread (the check the pool makes before it splits a loop); one
thread below `MIN_N` or where /proc/loadavg is not readable.

The setting is scipy-openblas32's global one (its build has no thread-local setting), put
back to one right after the call; one LAPACK call at a time may raise it (a lock, not
waited for: a second concurrent call runs on one thread).

>>> with threads(8):  # a small matrix: one thread, nothing changed
...     pass
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading

from tracejit.backend_cpu import blas

# Smaller factorizations stay on one thread. A guess, not a measurement: on the shared
# machine no call ever found a free core (RESULTS.md), so the gain at any size is unmeasured.
MIN_N = 512
_raised = threading.Lock()


def _program_threads() -> int:
    for var in ("TRACEJIT_NUM_THREADS", "OMP_NUM_THREADS"):
        text = os.environ.get(var, "")
        if text.strip().isdigit() and int(text) >= 1:
            return int(text)
    return _cores()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _others_running() -> int | None:
    """Running tasks on the machine other than this thread (/proc/loadavg), or None."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None
    return max(running - 1, 0)


def count(n: int) -> int:
    """How many OpenBLAS threads a factorization of an n x n matrix gets now."""
    return free_threads() if n >= MIN_N else 1


def free_threads() -> int:
    """The program's thread count less the other running tasks (at least one): what a big
    library call between the program's parallel loops may use now."""
    wanted = _program_threads()
    if wanted <= 1:
        return 1
    others = _others_running()
    if others is None:
        return 1
    return max(1, min(wanted, _cores() - others))


def unless_crowded() -> int:
    """The program's thread count (at most the cores) unless as many other tasks as cores
    are running (then one): the check the program's pool makes before it splits a loop
    (cpp/pool.cpp). For a library call whose threads meet once per pass (an FFT), where a
    busy core beside costs little and a free one pays, not for LAPACK's (`free_threads`)."""
    wanted = program_threads()
    others = _others_running()
    if wanted <= 1 or others is None or others >= _cores():
        return 1
    return wanted


def program_threads() -> int:
    """The program's thread count, at most the cores."""
    return min(_program_threads(), _cores())


@contextlib.contextmanager
def threads(n: int):
    """scipy-openblas32 on `count(n)` threads inside the block (back to one after)."""
    k = count(n)
    dll = blas.library()
    setter = getattr(dll, "scipy_openblas_set_num_threads", None) if dll is not None else None
    if k <= 1 or setter is None or not _raised.acquire(blocking=False):
        yield
        return
    try:
        setter(ctypes.c_int(k))
        yield
    finally:
        setter(ctypes.c_int(1))
        _raised.release()


__all__ = ["MIN_N", "count", "free_threads", "program_threads", "threads", "unless_crowded"]
