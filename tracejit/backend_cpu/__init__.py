"""The CPU backend: fused C++ kernels run by the pybind11 static executor.

`compile_cpu(graph)` fuses and schedules the graph (ir/fusion, ir/memory), generates one C++
translation unit (codegen), compiles it through the persistent cache (tracejit.cache) and
loads it into a `tracejit._core.Executor`, which runs the whole schedule in one call.

Given `parts` (the key of the traced graph, `tracejit.backends.graph_parts`), the entry is
stored under that key with the executable's metadata (schedule, input spec) beside the
library, so `load_cpu(parts)` in a fresh process rebuilds the executable from disk without
running passes, fusion, codegen or the compiler.

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda x: x * 2.0)(np.ones(3, np.float32))
>>> compile_cpu(g)([np.arange(3, dtype=np.float32)])
[array([0., 2., 4.], dtype=float32)]
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tracejit import cache, debug, timing
from tracejit.backend_cpu import (
    abi,
    blas,
    collectives,
    compiler,
    fft_step,
    lapack,
    lapack_decomp,  # noqa: F401  (registers eigh, svd and qr with `lapack`)
    numpy_blas,
)
from tracejit.cache import payload
from tracejit.const_array import ConstArray
from tracejit.distributed import native as distributed_native
from tracejit.errors import CompileError, TracejitError
from tracejit.ir.array_library import INTO_IMPLS
from tracejit.ir.graph import Graph
from tracejit.ir.interpret import apply_primitive
from tracejit.ir.primitives import get as get_primitive

if TYPE_CHECKING:  # imported where used: a warm cache hit needs no kernel classes (~4 ms)
    from tracejit.ir import kernel

# The modules whose text decides the generated C++ (hashed into source-keyed entries).
_CODEGEN_MODULES = tuple(
    f"tracejit.{name}"
    for name in (
        "backend_cpu.codegen",
        "backend_cpu.loops",
        "backend_cpu.columns",
        "backend_cpu.emit",
        "backend_cpu.fast_exp",
        "backend_cpu.fast_log",
        "backend_cpu.vector_math",
        "backend_cpu.gather",
        "backend_cpu.collectives",
        "backend_cpu.rows",
        "backend_cpu.compiler",
        "ir.c_render",
        "ir.cwriter.dedupe",
        "ir.cwriter.dialect",
        "ir.cwriter.emit",
        "ir.cwriter.fast_tanh",
        "ir.cwriter.layout",
        "ir.cwriter.library",
        "ir.cwriter.reduce",
        "ir.threefry",
        "ir.kernel_simplify",
        "ir.fusion",
        "ir.kernel",
        "ir.memory",
    )
)


def codegen_sources() -> tuple:
    """The codegen modules, imported here on the first compile, not at import: a warm cache
    hit (`load_cpu`) needs none of them (~30 ms of a fresh process's first call)."""
    return tuple(importlib.import_module(name) for name in _CODEGEN_MODULES)


def _is_callback(step: kernel.Step, buffers: dict[int, kernel.Buffer]) -> bool:
    """A Fallback step the generated C++ calls NumPy back for (not compiled natively)."""
    from tracejit.ir import kernel
    from tracejit.ir.gather_plan import is_native

    if not isinstance(step, kernel.Fallback) or is_native(step, buffers):
        return False
    return not collectives.is_collective(step, buffers)  # MPI called from C++


class _Fallbacks:
    """Runs the NumPy fallback steps of one schedule when generated code calls back."""

    def __init__(
        self,
        schedule: kernel.Schedule,
        native: frozenset[int] = frozenset(),
        region_callbacks: dict | None = None,
    ):
        buffers = {b.id: b for b in schedule.buffers}
        # id -> (step, its schedule's buffers): this schedule's steps by index (but the
        # compiled loops, `native`), then the loop bodies' callbacks (backend_cpu/loops.py)
        self.entries = {
            i: (s, buffers)
            for i, s in enumerate(schedule.steps)
            if _is_callback(s, buffers) and i not in native
        }
        self.entries.update(region_callbacks or {})
        self.steps = {i: s for i, (s, _) in self.entries.items()}

    def __bool__(self) -> bool:
        return bool(self.steps)

    def pointer_count(self, step: int) -> int:  # called by the C++ executor (cpp/executor.cpp)
        s = self.steps[step]
        return len(s.inputs) + len(s.outputs)

    @staticmethod
    def _array(address: int, b: kernel.Buffer) -> np.ndarray:
        if b.nbytes == 0:
            return np.empty(b.shape, b.dtype)
        raw = (ctypes.c_char * b.nbytes).from_address(address)
        return np.frombuffer(raw, dtype=b.dtype).reshape(b.shape)

    def __call__(self, step: int, addresses: list[int]) -> None:
        s, buffers = self.entries[step]
        arrays = [self._array(a, buffers[b]) for a, b in zip(addresses, s.inputs + s.outputs)]
        ins, outs = arrays[: len(s.inputs)], arrays[len(s.inputs) :]
        native = lapack.into(s.prim, ins) or fft_step.into(s.prim, ins)
        if native is not None:  # LAPACK on the buffers themselves, or a threaded fft
            native(*ins, outs, **s.attrs)
            return
        prim = get_primitive(s.prim)
        into = INTO_IMPLS.get(prim)
        with numpy_blas.one_thread():  # next to the program's own threads
            if into is not None:  # writes its results into the output buffers itself
                with np.errstate(all="ignore"):
                    into(*ins, outs, **s.attrs)
                return
            # the implementations never write into their operands (the interpreter shares them)
            results = apply_primitive(prim, ins, s.attrs)
        for dst, src in zip(outs, results):
            np.copyto(dst, src)


def run_info(
    schedule: kernel.Schedule,
    native_loops: frozenset[int] = frozenset(),
    region_callbacks: dict | None = None,
) -> tuple:
    """What running a schedule needs: output types, constants, arena size, whether it
    multiplies, its NumPy callbacks (stored apart from the schedule, `payload.RUN_FILE`)."""
    from tracejit.ir import kernel

    buffers = {b.id: b for b in schedule.buffers}
    out_spec = [(buffers[b].shape, buffers[b].dtype) for b in schedule.outputs]
    has_matmul = any(isinstance(s, kernel.Matmul) for s in schedule.steps)
    fallbacks = _Fallbacks(schedule, native_loops, region_callbacks)
    return out_spec, schedule.consts, schedule.arena_bytes, has_matmul, fallbacks


class CpuExecutable:
    """A compiled function: `__call__(arrays) -> arrays`, `source()`, `kernels()`.

    `schedule` may be given as a function returning it (a warm cache hit: unpickled on first
    use, `run` then holds what running needs, from `run_info`)."""

    def __init__(
        self,
        schedule: kernel.Schedule | Callable[[], kernel.Schedule],
        source: str,
        library: str,
        in_spec: list,
        native_loops: frozenset[int] = frozenset(),
        region_callbacks: dict | None = None,
        run: tuple | None = None,
    ):
        from tracejit import _core

        self._schedule = schedule
        self._source = source
        self.library = library
        if run is None:
            run = run_info(schedule, native_loops, region_callbacks)
        out_spec, consts, arena_bytes, has_matmul, fallbacks = run
        # BLAS is loaded only for schedules that multiply (~1-20 ms on a first call).
        sgemm, dgemm = blas.gemm_pointers() if has_matmul else (0, 0)
        self._fallback_steps = fallbacks.steps
        spec = [(tuple(shape), dtype) for shape, dtype in in_spec]
        abi.check_runtime_abi()
        args = (library, spec, out_spec, consts, arena_bytes, sgemm, dgemm)
        args += (fallbacks if fallbacks else None,)
        # the MPI context of compiled collectives (tracejit/distributed/native.py)
        self._mpi = distributed_native.address() if collectives.USE in source else 0
        self._executor = _core.Executor(*args, out_type=ConstArray, mpi=self._mpi)
        self._agreed = not self._mpi  # checked at the first call, outside the cache's lock

    @property
    def schedule(self) -> kernel.Schedule:
        if callable(self._schedule):
            self._schedule = self._schedule()
        return self._schedule

    def __call__(self, args: Sequence[np.ndarray], outs: list | None = None) -> list[np.ndarray]:
        """Run; `outs` (donation): per output, None or the array to write it into."""
        if self._mpi:  # one thread runs collectives (tracejit/distributed/threads.py)
            distributed_native.check_thread()
        if not self._agreed:  # every process compiled the same collectives (debug check)
            distributed_native.agree_on_collectives(self.schedule)
            self._agreed = True
        try:
            return self._run(args, outs)
        except TracejitError:
            if self._mpi:  # a compiled collective failed: say why (timeout, process count)
                distributed_native.raise_failure()
            raise

    def _run(self, args: Sequence[np.ndarray], outs: list | None) -> list[np.ndarray]:
        if timing.events is not None:  # tj.profile records each step's time
            from tracejit.backend_cpu.profiled import run_profiled

            return run_profiled(self._executor, self.library, args, outs)
        if outs is None:
            return self._executor(args)
        try:
            return self._executor(args, outs)
        except TypeError as e:  # an extension built before donation: no `outs` argument
            if "incompatible function arguments" not in str(e):
                raise
            raise CompileError(
                "the C++ runtime tracejit/_core predates output donation (donate_argnums): "
                "rebuild it (pip install -e ., or the cmake commands of the README)"
            ) from e

    def source(self) -> str:
        return self._source

    def kernels(self) -> list[str]:
        return self.schedule.kernel_names()

    def fallbacks(self) -> list[str]:
        """Primitives this function runs through NumPy (not yet compiled to C++)."""
        return [s.prim for s in self._fallback_steps.values()]


def schedule_graph(graph: Graph) -> kernel.Schedule:
    """Fuse and plan `graph`: the schedule the C++ is generated from."""
    from tracejit.distributed.overlap import collectives_early
    from tracejit.ir import fusion, memory

    # collectives start as soon as their operands are computed (overlapping the backward)
    return memory.plan_memory(fusion.fuse(collectives_early(graph)))


def _in_spec(graph: Graph) -> list:
    return [(tuple(v.shape), v.dtype) for v in graph.inputs]


def toolchain_parts() -> dict:
    """The compiler's part of every CPU key: its identity and the whole command line."""
    cxx = compiler.find_compiler()
    return {
        "compiler": compiler.identity(cxx),
        "flags": list(compiler.command(cxx, "SRC", "LIB")),
        "cpu": cache.cpu_identity(),
    }


def _load(library: str) -> CpuExecutable:
    """The executable of a graph-keyed entry: the library plus its pickled metadata (the
    schedule's bytes are read now, while the entry cannot be removed, and unpickled only
    when something asks for the schedule)."""
    entry = Path(library).parent
    in_spec, run = payload.loads((entry / payload.RUN_FILE).read_bytes())
    stored = (entry / payload.EXECUTABLE_FILE).read_bytes()
    source = (entry / "source.cpp").read_text(encoding="utf-8")
    schedule = functools.partial(_unpickled_schedule, stored)
    return CpuExecutable(schedule, source, library, in_spec, run=run)


def _unpickled_schedule(stored: bytes) -> kernel.Schedule:
    return payload.loads(stored)[0]


def load_cpu(parts: dict) -> CpuExecutable | None:
    """The executable stored under the graph key `parts`, or None (nothing is compiled)."""
    return cache.lookup(parts, ".so", load=_load)


def compile_cpu(graph: Graph, name: str = "function", parts: dict | None = None) -> CpuExecutable:
    """Compile `graph` to a `CpuExecutable` (through the persistent cache).

    Without `parts` the library is keyed by its source; with `parts` (the traced graph's key)
    it is stored under them with the executable's metadata, for `load_cpu`.
    """
    t0 = time.perf_counter()
    schedule = schedule_graph(graph)
    t1 = time.perf_counter()
    from tracejit.backend_cpu import codegen, loops

    loop_plan = loops.plan_loops(schedule)
    source = codegen.generate(schedule, name, loop_plan)
    t2 = time.perf_counter()
    dump = debug.current_dump()
    dump.write("schedule", schedule)  # formatted only when a dump folder is set
    dump.write("source.cpp", source)
    cxx = compiler.find_compiler()
    meta = {"name": name, "inputs": [[list(v.shape), str(v.dtype)] for v in graph.inputs]}

    def build(src: str, lib: str) -> None:
        compiler.compile_library(cxx, src, lib)

    in_spec, native_loops = _in_spec(graph), frozenset(loop_plan.calls)
    callbacks = loop_plan.callbacks
    blob = run_blob = None
    if parts is not None:
        blob = payload.dumps((schedule, in_spec, native_loops, callbacks))
        run_blob = payload.dumps((in_spec, run_info(schedule, native_loops, callbacks)))
    if blob is None or run_blob is None:
        key_parts = {
            "backend": "cpu",
            "source": source,
            "codegen": cache.source_hash(codegen_sources()),
            **toolchain_parts(),
        }
        library = cache.get_or_build(key_parts, source, build, ".so", meta)
        executable = CpuExecutable(schedule, source, library, in_spec, native_loops, callbacks)
    else:
        files = {payload.EXECUTABLE_FILE: blob, payload.RUN_FILE: run_blob}
        executable = cache.get_or_build(parts, source, build, ".so", meta, files, load=_load)
    load = time.perf_counter() - t2
    timing.log_compile(
        name, {"fusion": t1 - t0, "codegen": t2 - t1, "C++ compile/cache/load": load}
    )
    return executable


__all__ = ["CpuExecutable", "compile_cpu", "load_cpu", "schedule_graph", "toolchain_parts"]
