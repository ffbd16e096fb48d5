"""Backends turn an optimized `Graph` into an `Executable`; this module picks one by device.

"numpy"  the reference interpreter (always available)
"cpu"    generated C++ through the pybind11 runtime (falls back to "numpy" until built)
"cuda"   generated CUDA C through CuPy
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from tracejit.config import DEVICES
from tracejit.errors import DeviceError
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


def compile_graph(graph: Graph, device: str, name: str = "function") -> Executable:
    """Compile `graph` for `device`."""
    check_device(device)
    if device == "numpy":
        return ReferenceExecutable(graph, name)
    if device == "cpu":
        from tracejit.backend_cpu import compile_cpu

        return compile_cpu(graph, name)
    from tracejit.backend_cuda import compile_cuda

    return compile_cuda(graph, name)  # DeviceError when CuPy or a GPU is missing
