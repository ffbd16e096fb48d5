"""Collectives of CUDA functions over NCCL (tracejit/distributed/nccl.py), one GPU per
process: `mpiexec -n 2` on a machine with 2 GPUs and CuPy's NCCL bindings, else skipped."""

from __future__ import annotations

import pytest
from _mpi_launch import WORKER, launch


def _gpus_with_nccl() -> int:
    try:
        import cupy
        from cupy.cuda import nccl  # noqa: F401
    except ImportError:
        return 0
    if getattr(cupy, "EMULATED", False):
        return 0
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        return 0


def test_nccl_collectives_on_two_gpus_match_numpy():
    if _gpus_with_nccl() < 2:
        pytest.skip("needs 2 CUDA GPUs and CuPy's NCCL bindings (cupy.cuda.nccl)")
    done = launch([WORKER, "nccl"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0 ok" in done.stdout and "rank 1 ok" in done.stdout, done.stdout
