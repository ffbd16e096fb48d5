"""The transport under tracejit's collectives: MPI through mpi4py, or one process alone.

`MpiComm` wraps an mpi4py communicator. Each collective is started non-blocking and waited
for with a deadline (`TRACEJIT_DISTRIBUTED_TIMEOUT` seconds, default 120): MPI has no
timeout of its own, so a peer that died or never reaches the collective turns into a
`DistributedError` here instead of a hang. Only one thread may run them (`threads.py`). `SingleComm` is the world of one process that
`tracejit.distributed` uses before (or without) `initialize()`.
"""

from __future__ import annotations

import os
import time
import zlib

import numpy as np

from tracejit.distributed.native import timeout_message
from tracejit.distributed.threads import OWNER
from tracejit.errors import DistributedError


def timeout_seconds() -> float:
    return float(os.environ.get("TRACEJIT_DISTRIBUTED_TIMEOUT", "120"))


class SingleComm:
    """One process: every collective is the identity (or a stack of one)."""

    rank, size = 0, 1

    def allreduce(self, x: np.ndarray, op: str, what: str = "") -> np.ndarray:
        return x.copy()

    def allgather(self, x: np.ndarray) -> np.ndarray:
        return x[None].copy()

    def reduce_scatter(self, x: np.ndarray) -> np.ndarray:
        return x[0].copy()

    def ppermute(self, x: np.ndarray, perm) -> np.ndarray:
        return x.copy() if (0, 0) in perm else np.zeros_like(x)

    def agree(self, what: str, signature: tuple) -> None:
        return None


class MpiComm:
    """Collectives of an mpi4py communicator on NumPy buffers, each with a deadline."""

    def __init__(self, comm):
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def _wait(self, request, what: str) -> None:
        # MPI advances a non-blocking collective only inside MPI calls: test it back to back
        # for the first 20 ms (a large message moves in many pieces), then every ~1 ms.
        start = time.monotonic()
        deadline = start + timeout_seconds()
        while not request.Test():
            now = time.monotonic()
            if now > deadline:
                message = timeout_message(what, self.rank, self.size, timeout_seconds())
                raise DistributedError(message)
            time.sleep(0 if now - start < 0.02 else 1e-3)

    def _op(self, op: str):
        return {"sum": self.MPI.SUM, "max": self.MPI.MAX, "min": self.MPI.MIN}[op]

    def allreduce(self, x: np.ndarray, op: str, what: str = "") -> np.ndarray:
        OWNER.check(what or f"p{op}", self.size)
        src, out = np.ascontiguousarray(x), np.empty_like(x)
        self._wait(self.comm.Iallreduce(src, out, op=self._op(op)), what or f"p{op}")
        return out

    def allgather(self, x: np.ndarray) -> np.ndarray:
        OWNER.check("all_gather", self.size)
        src, out = np.ascontiguousarray(x), np.empty((self.size, *x.shape), x.dtype)
        self._wait(self.comm.Iallgather(src, out), "all_gather")
        return out

    def reduce_scatter(self, x: np.ndarray) -> np.ndarray:
        OWNER.check("psum_scatter", self.size)
        src, out = np.ascontiguousarray(x), np.empty(x.shape[1:], x.dtype)
        self._wait(self.comm.Ireduce_scatter_block(src, out, op=self.MPI.SUM), "psum_scatter")
        return out

    def ppermute(self, x: np.ndarray, perm) -> np.ndarray:
        OWNER.check("ppermute", self.size)
        src, out = np.ascontiguousarray(x), np.zeros_like(x)
        requests = [self.comm.Isend(src, dest=d, tag=7) for s, d in perm if s == self.rank]
        requests += [self.comm.Irecv(out, source=s, tag=7) for s, d in perm if d == self.rank]
        for r in requests:
            self._wait(r, "ppermute")
        return out

    def agree(self, what: str, signature: tuple) -> None:
        """Raise DistributedError unless every process passes the same `signature`."""
        text = ascii(signature)
        code = zlib.crc32(text.encode())
        high, minus_low = self.allreduce(np.array([code, -code], np.int64), "max", what)
        if high == -minus_low:  # one all-reduce gives the largest and the smallest code
            return
        mine = np.frombuffer(text.ljust(200)[:200].encode(), np.uint8)
        everyone = np.empty((self.size, 200), np.uint8)
        self._wait(self.comm.Iallgather(mine, everyone), what)
        seen = [bytes(row).decode(errors="replace").rstrip() for row in everyone]
        listing = "; ".join(f"process {i}: {s}" for i, s in enumerate(seen))
        raise DistributedError(f"{what}: operands differ between processes ({listing})")
