"""The CUDA backend: the CPU backend's schedule as CUDA C, launched through CuPy.

`compile_cuda(graph)` fuses and plans the graph exactly as the CPU backend does (ir/fusion,
ir/memory), generates one CUDA source for the whole function (codegen, reduce), compiles it
once with NVRTC under IEEE float options (nvrtc; cached on disk), loads it with
`cupy.RawModule` and returns a `CudaExecutable` (launcher). Matmul is
cuBLAS through `cupy.matmul`; buffers come from CuPy's memory pool. A function called often
may replay its launches as one CUDA graph (graphs; `tj.config.cuda_graphs`).

`cuda_source(graph)` needs no GPU (nor CuPy): it is what CI compiles with `nvcc --cubin`.

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda x: x * 2.0)(np.ones(3, np.float32))
>>> "__global__" in cuda_source(g).source
True
"""

from __future__ import annotations

import logging
import time

from tracejit.backend_cuda import codegen
from tracejit.config import config
from tracejit.ir import fusion, memory
from tracejit.ir.graph import Graph


def cuda_source(graph: Graph, name: str = "function") -> codegen.CudaProgram:
    """The CUDA program (source and launches) for `graph`; runs anywhere."""
    return codegen.generate(memory.plan_memory(fusion.fuse(graph)), name)


def compile_cuda(graph: Graph, name: str = "function"):
    """Compile `graph` for the current CUDA device (DeviceError without CuPy or a GPU)."""
    from tracejit.backend_cuda.launcher import CudaExecutable
    from tracejit.devices import cupy_or_error

    cupy = cupy_or_error()
    t0 = time.perf_counter()
    schedule = memory.plan_memory(fusion.fuse(graph))
    program = codegen.generate(schedule, name)
    t1 = time.perf_counter()
    executable = CudaExecutable(cupy, schedule, program, name)
    if config.log_compiles:
        logging.getLogger("tracejit").warning(
            "%s: fusion+codegen %.1f ms, NVRTC compile/load %.1f ms",
            name,
            (t1 - t0) * 1e3,
            (time.perf_counter() - t1) * 1e3,
        )
    return executable


__all__ = ["compile_cuda", "cuda_source"]
