"""The CUDA backend: the CPU backend's schedule as CUDA C, launched through CuPy.

`compile_cuda(graph)` fuses and plans the graph exactly as the CPU backend does (ir/fusion,
ir/memory), generates one CUDA source for the whole function (codegen, reduce), compiles it
once with NVRTC under IEEE float options (nvrtc; cached on disk), loads it with
`cupy.RawModule` and returns a `CudaExecutable` (launcher). Matmul is
cuBLAS through `cupy.matmul`; buffers come from CuPy's memory pool. A function called often
may replay its launches as one CUDA graph (graphs; `tj.config.cuda_graphs`).

Given `parts` (the traced graph's key, `tracejit.backends.graph_parts`), the schedule and
program are stored under it, so `load_cuda(parts)` in a fresh process skips fusion and codegen
(and, through NVRTC's source-keyed entry, the compiler).

`cuda_source(graph)` needs no GPU (nor CuPy): it is what CI compiles with `nvcc --cubin`.

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda x: x * 2.0)(np.ones(3, np.float32))
>>> "__global__" in cuda_source(g).source
True
"""

from __future__ import annotations

import time
from pathlib import Path

from tracejit import cache, timing
from tracejit.backend_cuda import codegen
from tracejit.cache import payload
from tracejit.ir import fusion, memory
from tracejit.ir.graph import Graph


def cuda_source(graph: Graph, name: str = "function") -> codegen.CudaProgram:
    """The CUDA program (source and launches) for `graph`; runs anywhere."""
    return codegen.generate(memory.plan_memory(fusion.fuse(graph)), name)


# The "library" of a graph-keyed CUDA entry: the pickled (schedule, program), whose NVRTC
# binary is cached by its source (nvrtc.binary_path) for each GPU architecture.
PROGRAM_SUFFIX = ".pkl"


def _read(path: str):
    return payload.loads(Path(path).read_bytes())


def load_cuda(parts: dict, name: str = "function"):
    """The executable stored under the graph key `parts`, or None: no fusion, no codegen."""
    from tracejit.backend_cuda.launcher import CudaExecutable
    from tracejit.devices import cupy_or_error

    cupy = cupy_or_error()
    found = cache.lookup(parts, PROGRAM_SUFFIX, load=_read)
    return None if found is None else CudaExecutable(cupy, *found, name)


def _store(parts: dict, schedule, program: codegen.CudaProgram) -> None:
    blob = payload.dumps((schedule, program))
    if blob is None:
        return  # not storable: this function runs the compile phases in every process

    def build(_source: str, path: str) -> None:
        Path(path).write_bytes(blob)

    cache.get_or_build(parts, program.source, build, PROGRAM_SUFFIX)


def compile_cuda(graph: Graph, name: str = "function", parts: dict | None = None):
    """Compile `graph` for the current CUDA device (DeviceError without CuPy or a GPU).

    With `parts` (the traced graph's key) the schedule and program are stored under it too,
    for `load_cuda` in a fresh process.
    """
    from tracejit.backend_cuda.launcher import CudaExecutable
    from tracejit.devices import cupy_or_error

    cupy = cupy_or_error()
    t0 = time.perf_counter()
    schedule = memory.plan_memory(fusion.fuse(graph))
    program = codegen.generate(schedule, name)
    t1 = time.perf_counter()
    executable = CudaExecutable(cupy, schedule, program, name)
    if parts is not None:
        _store(parts, schedule, program)
    load = time.perf_counter() - t1
    timing.log_compile(name, {"fusion+codegen": t1 - t0, "NVRTC compile/load": load})
    return executable


__all__ = ["PROGRAM_SUFFIX", "compile_cuda", "cuda_source", "load_cuda"]
