"""Data-parallel SPMD over processes: one process per device, MPI between them (CPU).

    mpiexec -n 2 python train.py

    import tracejit as tj
    tj.distributed.initialize()                      # MPI_COMM_WORLD: rank and size
    def step(params, x, y):                          # each process: its own shard of x, y
        grads = tj.grad(loss)(params, x, y)
        return tj.lax.pmean(grads, axis_name="batch")
    step = tj.jit(tj.distributed.spmd(step, axis_name="batch"))

`spmd(f, axis_name)` runs `f` on every process with the axis `axis_name` bound to all of
them, so `tracejit.lax.psum`/`pmean`/`pmax`/`all_gather`/`psum_scatter`/`ppermute`/
`axis_index` inside it are collectives over the processes (`tracejit/lax/parallel.py`).

How the collectives run: they are primitives of the IR; the reference interpreter runs them
through mpi4py; the compiled CPU program calls MPI's functions from C++ with the GIL released
(backend_cpu/collectives.py, with the context of `native.py`: no Python callback), gradient
buckets overlapping the backward (`overlap.py`); a compiled CUDA function queues NCCL on its
stream (`nccl.py`, through CuPy; one GPU per process, checked only on GPU machines).

Without `initialize()` (or without mpi4py) the world is this one process: collectives are
identities, `process_count() == 1`.
"""

from __future__ import annotations

import functools
import os
import sys
import threading

from tracejit.distributed import native
from tracejit.distributed._comm import MpiComm, SingleComm, timeout_seconds
from tracejit.errors import DistributedError

_STATE = {"comm": SingleComm()}
_AXES = threading.local()  # .bound: [(axis name, trace)] of the spmd calls this thread is in

# Environment variables MPI launchers (and Slurm) set for each process: (rank, size).
_LAUNCHER_ENV = (
    ("PMI_RANK", "PMI_SIZE"),  # MPICH (hydra), Intel MPI
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),  # Open MPI
    ("SLURM_PROCID", "SLURM_NTASKS"),  # srun
)


def launcher_env() -> tuple[int, int] | None:
    """(rank, size) from the launcher's environment, or None when not launched by one."""
    for rank, size in _LAUNCHER_ENV:
        if rank in os.environ and size in os.environ:
            return int(os.environ[rank]), int(os.environ[size])
    return None


def _abort_on_uncaught(comm):
    """An uncaught exception in one process aborts the job instead of leaving peers waiting."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = hook


def initialize() -> None:
    """Join the processes started by `mpiexec`/`srun` (MPI_COMM_WORLD). Idempotent."""
    if isinstance(_STATE["comm"], MpiComm):
        return
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise DistributedError(
            "tracejit.distributed needs mpi4py and an MPI library: "
            'pip install "tracejit[distributed]" (mpi4py, mpich)'
        ) from err
    comm = MpiComm(MPI.COMM_WORLD)
    expected = launcher_env()
    if expected is not None and expected != (comm.rank, comm.size):
        raise DistributedError(
            f"the launcher says process {expected[0]} of {expected[1]}, MPI says "
            f"{comm.rank} of {comm.size}: is mpi4py built against another MPI than mpiexec's?"
        )
    _abort_on_uncaught(MPI.COMM_WORLD)
    native.bind_mpi(MPI.COMM_WORLD, timeout_seconds())
    _STATE["comm"] = comm


def comm():
    """The communicator collectives run on (MpiComm after `initialize()`, else SingleComm)."""
    return _STATE["comm"]


def process_index() -> int:
    """This process's index among the processes (0 without `initialize()`)."""
    return _STATE["comm"].rank


def process_count() -> int:
    """How many processes run the program (1 without `initialize()`)."""
    return _STATE["comm"].size


def checks_enabled() -> bool:
    """Whether each collective first checks that every process passes the same shape and
    dtype (two small all-reduces; TRACEJIT_DISTRIBUTED_CHECKS=0 turns it off)."""
    return os.environ.get("TRACEJIT_DISTRIBUTED_CHECKS", "1") != "0"


def _axes() -> list:
    if not hasattr(_AXES, "bound"):
        _AXES.bound = []
    return _AXES.bound


def bound_axes() -> tuple[str, ...]:
    return tuple(name for name, _ in _axes())


def axis_trace(axis_name: str):
    """The trace `spmd` was entered under for `axis_name` (None when called eagerly)."""
    for name, trace in reversed(_axes()):
        if name == axis_name:
            return trace if trace is not None and trace.active else None
    return None


def _trace_of(tree):
    from tracejit.pytree import tree_leaves
    from tracejit.tracer.core import innermost_trace

    return innermost_trace(tree_leaves(tree))


def spmd(fun, axis_name: str):
    """`fun` run on every process, with `axis_name` naming the axis of all processes.

    One named axis: the processes form a line, not a mesh, so an `spmd` called inside
    another must use the same axis name (a second name would be a second axis over the same
    processes, which no collective could tell apart from the first: DistributedError)."""
    if not isinstance(axis_name, str) or not axis_name:
        raise DistributedError(f"spmd: axis_name must be a non-empty str, got {axis_name!r}")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        bound = _axes()
        other = next((name for name, _ in bound if name != axis_name), None)
        if other is not None:
            raise DistributedError(
                f"spmd: axis {axis_name!r} inside axis {other!r}: one named axis (all the "
                "processes) is supported, not a mesh of several; use one axis name"
            )
        bound.append((axis_name, _trace_of((args, kwargs))))
        try:
            return fun(*args, **kwargs)
        finally:
            bound.pop()

    return wrapped


__all__ = [
    "axis_trace",
    "bound_axes",
    "checks_enabled",
    "comm",
    "initialize",
    "launcher_env",
    "process_count",
    "process_index",
    "spmd",
]
