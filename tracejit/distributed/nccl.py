"""Collectives of compiled CUDA functions: NCCL (CuPy's `cupy.cuda.nccl`) on the stream.

A `psum`/`pmax`/`pmin`/`all_gather`/`psum_scatter`/`ppermute`/`axis_index` step of a CUDA
schedule is a `NcclStep` (backend_cuda/launcher.py builds one instead of the host round trip
of a NumPy fallback step): device buffers go straight to NCCL, queued on the current stream
like the kernels around them. The communicator is made at the first such call: process 0's
NCCL unique id is broadcast over MPI (`tracejit.distributed.initialize()`), one GPU per
process (choose it, e.g. with CUDA_VISIBLE_DEVICES, before the first CUDA call). Over one
process every collective is a device copy and needs no NCCL.

Checked here only by the one-process path (CPU emulator, tests/backend/test_distributed.py)
and imports; the NCCL path runs on GPU machines (tests/gpu/test_distributed_nccl.py).
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit import distributed
from tracejit.distributed.native import KINDS
from tracejit.distributed.threads import OWNER
from tracejit.errors import DistributedError
from tracejit.ir import kernel as K

_TYPES = {
    "float64": "NCCL_FLOAT64",
    "float32": "NCCL_FLOAT32",
    "float16": "NCCL_FLOAT16",
    "int64": "NCCL_INT64",
    "int32": "NCCL_INT32",
    "int8": "NCCL_INT8",
    "uint64": "NCCL_UINT64",
    "uint32": "NCCL_UINT32",
    "uint8": "NCCL_UINT8",
}
_OPS = {"psum": "NCCL_SUM", "pmax": "NCCL_MAX", "pmin": "NCCL_MIN", "psum_scatter": "NCCL_SUM"}


def is_collective(step: K.Step) -> bool:
    return isinstance(step, K.Fallback) and step.prim in KINDS  # every collective


@functools.cache
def communicator(size: int, rank: int):
    """The NCCL communicator of the MPI world (process 0's unique id sent over MPI)."""
    try:
        from cupy.cuda import nccl
    except ImportError as err:
        raise DistributedError(
            "collectives of CUDA functions over several processes need NCCL through CuPy "
            "(pip install nvidia-nccl-cu12, or the nccl package matching your CuPy)"
        ) from err
    world = distributed.comm()
    uid = world.comm.bcast(nccl.get_unique_id() if rank == 0 else None, root=0)
    return nccl.NcclCommunicator(size, uid, rank)


class NcclStep:
    """One collective step of a CUDA schedule, on the current stream."""

    def __init__(self, step: K.Fallback, buffers: dict[int, K.Buffer]):
        self.s = step
        self.count = step.attrs["count"]
        self.x = buffers[step.inputs[0]] if step.inputs else None
        self.out = buffers[step.outputs[0]]

    def __call__(self, call) -> None:
        s, size, rank = self.s, distributed.process_count(), distributed.process_index()
        if size != self.count:
            raise DistributedError(
                f"{s.prim}: traced for {self.count} processes, running on {size}; trace it again"
            )
        OWNER.check(s.prim, size)  # one thread runs collectives (threads.py)
        out = call.array(s.outputs[0])
        if s.prim == "axis_index":
            out.fill(rank)
        elif s.prim == "ppermute":
            self._ppermute(call, out, size, rank)
        elif size == 1:
            out[...] = call.array(s.inputs[0]).reshape(out.shape)
        else:
            self._nccl(call, size, rank)

    def _ppermute(self, call, out, size: int, rank: int) -> None:
        perm, x = self.s.attrs["perm"], call.array(self.s.inputs[0])
        if size == 1:
            out[...] = x if (0, 0) in perm else 0
            return
        from cupy.cuda import nccl

        comm, stream = communicator(size, rank), call.exe.cupy.cuda.get_current_stream().ptr
        kind = getattr(nccl, _TYPES["uint8"])
        if not any(d == rank for _, d in perm):
            out.fill(0)
        nccl.groupStart()
        for src, dst in perm:
            if src == rank:
                comm.send(x.data.ptr, x.nbytes, kind, dst, stream)
            if dst == rank:
                comm.recv(out.data.ptr, out.nbytes, kind, src, stream)
        nccl.groupEnd()

    def _nccl(self, call, size: int, rank: int) -> None:
        from cupy.cuda import nccl

        s, x = self.s, call.array(self.s.inputs[0])
        out = call.array(s.outputs[0])
        comm, stream = communicator(size, rank), call.exe.cupy.cuda.get_current_stream().ptr
        if s.prim == "all_gather":
            kind = getattr(nccl, _TYPES["uint8"])
            comm.allGather(x.data.ptr, out.data.ptr, x.nbytes, kind, stream)
            return
        name = _TYPES.get(np.dtype(self.x.dtype).name)
        if name is None:
            raise DistributedError(f"{s.prim}: NCCL has no {self.x.dtype} reduction")
        kind, op = getattr(nccl, name), getattr(nccl, _OPS[s.prim])
        if s.prim == "psum_scatter":
            comm.reduceScatter(x.data.ptr, out.data.ptr, out.size, kind, op, stream)
        else:
            comm.allReduce(x.data.ptr, out.data.ptr, x.size, kind, op, stream)


__all__ = ["NcclStep", "communicator", "is_collective"]
