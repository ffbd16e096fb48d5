"""`Lowered` (a traced, optimized function for one signature) and `Compiled` (its executable).

>>> import numpy as np, tracejit as tj
>>> low = tj.jit(lambda x: x + 1.0).lower(np.ones(2))
>>> print(low.as_text())
{ lambda a:f64[2] . let
    b:f64[] = const[value=1.0]
    c:f64[2] = broadcast_in_dim[dims=(), shape=(2,)] b
    d:f64[2] = add a c
  in (d,) }
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tracejit.backends import compile_graph
from tracejit.errors import ArgumentError
from tracejit.ir.graph import Graph


class Lowered:
    """A traced and optimized function for one signature: `as_text()`, `compile()`."""

    def __init__(self, graph: Graph, device: str, name: str):
        self.graph = graph
        self.device = device
        self.name = name

    def as_text(self) -> str:
        return str(self.graph)

    def graph_svg(self, what: str = "schedule") -> str:
        """SVG of the fused kernel schedule (`what="schedule"`) or of the IR (`"ir"`), drawn by
        `tracejit.dot` and rendered by Graphviz's `dot`; open the file in a browser."""
        from tracejit import dot

        draw = {"schedule": dot.schedule_dot, "ir": dot.graph_dot}.get(what)
        if draw is None:
            raise ArgumentError(f"graph_svg(what={what!r}): expected 'schedule' or 'ir'")
        return dot.to_svg(draw(self))

    def compile(self) -> Compiled:
        return Compiled(compile_graph(self.graph, self.device, self.name))


class Compiled:
    def __init__(self, executable):
        self.executable = executable

    def source(self) -> str:
        return self.executable.source()

    def kernels(self) -> list[str]:
        return self.executable.kernels()

    def __call__(self, *arrays: Sequence[np.ndarray]):
        return self.executable(
            [a if hasattr(a, "__cuda_array_interface__") else np.asarray(a) for a in arrays]
        )


__all__ = ["Compiled", "Lowered"]
