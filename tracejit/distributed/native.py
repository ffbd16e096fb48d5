"""The MPI context compiled collectives run with (cpp/abi.h's `TjMpi`), and their errors.

Generated code (backend_cpu/collectives.py) calls the non-blocking MPI functions directly,
GIL released: their addresses are looked up in the libmpi that mpi4py loaded (through the
mpi4py extension module's own dependency scope), the communicator, operation and datatype
handles come from `MPI._handleof`. One `TjMpi` lives for the process; `initialize()` fills it
in place, so every executable (compiled before or after) sees the current world. Without
MPI it says "one process" (rank 0, size 1, no functions), which single-process collectives
(copies) need no more than.

Handles are passed as 64-bit integers, whatever the MPI's ABI: MPICH's (MPICH, Intel MPI,
MVAPICH: the `mpich` wheel) are ints, Open MPI's are the addresses of its global objects
(`ompi_mpi_comm_world`, `ompi_mpi_op_sum`, `ompi_mpi_float`, ...), the MPI 5 ABI's are
pointer-sized; `MPI._handleof` gives each as an integer, and a request (an int, or a pointer)
fits the int64_t the generated code stores it in. Both MPICH and Open MPI are tested
(tests/backend/test_distributed.py under either's `mpiexec`). Where a function is missing from
the library, a compiled collective over several processes raises DistributedError naming it.
"""

from __future__ import annotations

import ctypes
import functools
import os

from tracejit.distributed.threads import OWNER
from tracejit.errors import DistributedError

FUNCTIONS = (
    ("iallreduce", "MPI_Iallreduce"),
    ("iallgather", "MPI_Iallgather"),
    ("ireduce_scatter_block", "MPI_Ireduce_scatter_block"),
    ("isend", "MPI_Isend"),
    ("irecv", "MPI_Irecv"),
    ("test", "MPI_Test"),
)
# The datatype slots of TjMpi.types (backend_cpu/collectives.py indexes them the same way).
TYPES = (
    ("float64", "DOUBLE"),
    ("float32", "FLOAT"),
    ("int64", "INT64_T"),
    ("int32", "INT32_T"),
    ("int16", "INT16_T"),
    ("int8", "INT8_T"),
    ("uint64", "UINT64_T"),
    ("uint32", "UINT32_T"),
    ("uint16", "UINT16_T"),
    ("uint8", "UINT8_T"),
    (None, "BYTE"),
)
# kind + 1 in TjMpi.failed names the collective (backend_cpu/collectives.py's KINDS)
KINDS = ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "axis_index")
_I64 = ctypes.c_int64


class TjMpi(ctypes.Structure):
    """cpp/abi.h's TjMpi, field for field (every field 8 bytes: no padding)."""

    _fields_ = [
        *((name, ctypes.c_void_p) for name, _ in FUNCTIONS),
        ("comm", _I64),
        ("in_place", _I64),
        ("ops", _I64 * 3),
        ("types", _I64 * 16),
        *((name, _I64) for name in ("rank", "size", "timeout_ns", "failed", "why", "count")),
    ]


_MISSING: list[str] = []  # the MPI functions bind_mpi did not find (for the error message)
_THREAD_MULTIPLE = [True]  # whether MPI allows calls from several threads (MPI.Query_thread)


@functools.cache
def context() -> TjMpi:
    """The process's TjMpi (one process until `bind_mpi`)."""
    ctx = TjMpi()
    ctx.rank, ctx.size = 0, 1
    return ctx


def address() -> int:
    """What the executor hands generated code as `ctx->mpi`."""
    return ctypes.addressof(context())


def bind_mpi(comm, timeout_s: float) -> None:
    """Fill the context from an mpi4py communicator (after `initialize()`)."""
    from mpi4py import MPI

    ctx = context()
    ctx.rank, ctx.size = comm.Get_rank(), comm.Get_size()
    ctx.timeout_ns = int(timeout_s * 1e9)
    _THREAD_MULTIPLE[0] = MPI.Query_thread() == MPI.THREAD_MULTIPLE
    library = ctypes.CDLL(MPI.__file__, mode=os.RTLD_NOLOAD)  # its libmpi is a dependency
    found = {symbol: getattr(library, symbol, None) for _, symbol in FUNCTIONS}
    _MISSING[:] = [symbol for symbol, f in found.items() if f is None]
    if _MISSING:
        return  # no functions: a compiled collective over several processes says why
    for field, symbol in FUNCTIONS:
        setattr(ctx, field, ctypes.cast(found[symbol], ctypes.c_void_p).value)
    ctx.comm, ctx.in_place = MPI._handleof(comm), int(MPI.IN_PLACE)
    for i, op in enumerate((MPI.SUM, MPI.MAX, MPI.MIN)):
        ctx.ops[i] = MPI._handleof(op)
    for i, (_, name) in enumerate(TYPES):
        ctx.types[i] = MPI._handleof(getattr(MPI, name))


def helper_threads_allowed() -> bool:
    """Whether MPI was initialized with MPI_THREAD_MULTIPLE (mpi4py's default), which the
    helper threads that test all-reduces overlapping the backward need (collectives.Overlap)."""
    return _THREAD_MULTIPLE[0]


def check_thread() -> None:
    """Raise DistributedError unless this thread may run compiled collectives (threads.py)."""
    OWNER.check("a compiled function with collectives", context().size)


def agree_on_collectives(schedule) -> None:
    """Debug check, once per executable (not per call): every process compiled the same
    collectives (primitive, shape, dtype), else DistributedError listing each one's."""
    from tracejit import distributed

    if context().size == 1 or not distributed.checks_enabled():
        return
    buffers = {b.id: b for b in schedule.buffers}
    signature = tuple(
        (s.prim, buffers[s.inputs[0]].shape, buffers[s.inputs[0]].dtype.str)
        for s in schedule.steps
        if getattr(s, "prim", None) in KINDS and s.inputs
    )
    distributed.comm().agree("compiled collectives", signature)


def raise_failure() -> None:
    """Raise the DistributedError a compiled collective recorded, if it did (and clear it)."""
    ctx = context()
    if not ctx.failed:
        return
    what, why, count = KINDS[ctx.failed - 1], ctx.why, ctx.count
    ctx.failed = ctx.why = ctx.count = 0
    where = f"process {ctx.rank} of {ctx.size}"
    if why == 1:
        raise DistributedError(timeout_message(what, ctx.rank, ctx.size, ctx.timeout_ns / 1e9))
    if why == 3:
        raise DistributedError(
            f"{what}: traced for {count} processes, running on {ctx.size}; trace it again"
        )
    if why == 4:
        from mpi4py import MPI

        vendor, version = MPI.get_vendor()
        raise DistributedError(
            f"{what}: compiled collectives call {', '.join(_MISSING)}, which the MPI library "
            f"of mpi4py ({vendor} {'.'.join(map(str, version))}) lacks: run the function "
            "without jit, or use another MPI (pip install mpich)"
        )
    raise DistributedError(f"{what}: MPI failed in {where} (or the message exceeds 2**31-1)")


def timeout_message(what: str, rank: int, size: int, seconds: float) -> str:
    return (
        f"{what}: process {rank} of {size} waited more than {seconds:g} s for the others "
        "(TRACEJIT_DISTRIBUTED_TIMEOUT); another process died or did not reach this collective"
    )


__all__ = [
    "TjMpi",
    "address",
    "agree_on_collectives",
    "bind_mpi",
    "check_thread",
    "context",
    "helper_threads_allowed",
    "raise_failure",
    "timeout_message",
]
