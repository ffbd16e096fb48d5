"""Backends turn an optimized `Graph` into an `Executable`; this module picks one by device.

"numpy"  the reference interpreter (always available)
"cpu"    generated C++ through the pybind11 runtime (falls back to "numpy" until built)
"cuda"   generated CUDA C through CuPy

The persistent cache is consulted before the expensive phases: `graph_parts` is the key of
a *traced* graph (its exact text, the device, tracejit's sources, NumPy's version, and for
"cpu" the compiler and the CPU), `load_cached(parts)` returns the stored executable of a fresh
process's warm cache without running passes, fusion, codegen or the compiler, and
`compile_graph(graph, device, name, parts)` stores what it compiles under those parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from tracejit import timing
from tracejit.config import DEVICES
from tracejit.errors import DeviceError
from tracejit.ir import dtypes
from tracejit.ir.graph import Graph
from tracejit.ir.interpret import evaluate


class Executable(Protocol):
    def __call__(self, args: Sequence[np.ndarray]) -> list[np.ndarray]: ...

    def source(self) -> str: ...

    def kernels(self) -> list[str]: ...


class ReferenceExecutable:
    """Runs a graph with the NumPy reference interpreter."""

    def __init__(self, graph: Graph, name: str = "function"):
        self.graph = graph
        self.name = name

    def __call__(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        outs = evaluate(self.graph, args)
        return [
            np.array(o, copy=True) if not o.flags.owndata or not o.flags.writeable else o
            for o in outs
        ]

    def source(self) -> str:
        return str(self.graph)

    def kernels(self) -> list[str]:
        return [f"{i}:{n.prim.name}" for i, n in enumerate(self.graph.nodes)]


def check_device(device: str) -> str:
    if device not in DEVICES:
        raise DeviceError(f"unknown device {device!r}; use one of {DEVICES}")
    return device


def graph_parts(traced: Graph, device: str, name: str) -> dict | None:
    """The persistent key of a traced graph for `device`, or None where there is none.

    None for "numpy" (it compiles nothing), for graphs with attributes that have no stable
    text, and while debug dumps are on (they want every phase to run).
    """
    from tracejit.cache import graph_key

    parts = None if device == "numpy" else graph_key.key_parts(traced, "traced-graph")
    if parts is None:
        return None
    parts.update(backend=device, name=name)
    if device == "cpu":
        from tracejit.backend_cpu import toolchain_parts

        parts.update(toolchain_parts())
    return parts


def load_cached(parts: dict | None, device: str, name: str = "function") -> Executable | None:
    """The executable stored under `parts` (from `graph_parts`), or None on a miss."""
    if parts is None:
        return None
    with timing.phase("cache lookup and load"):
        if device == "cpu":
            from tracejit.backend_cpu import load_cpu

            return load_cpu(parts)
        from tracejit.backend_cuda import load_cuda

        return load_cuda(parts, name)  # DeviceError when CuPy or a GPU is missing


def compile_graph(
    graph: Graph, device: str, name: str = "function", parts: dict | None = None
) -> Executable:
    """Compile `graph` for `device`; with `parts` (`graph_parts`) store it under them too."""
    check_device(device)
    if device == "numpy":
        return ReferenceExecutable(graph, name)
    dtypes.check_compilable(graph, device)
    if device == "cpu":
        from tracejit.backend_cpu import compile_cpu

        return compile_cpu(graph, name, parts)
    from tracejit.backend_cuda import compile_cuda

    return compile_cuda(graph, name, parts)  # DeviceError when CuPy or a GPU is missing
