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

from dataclasses import dataclass, field

import numpy as np

from tracejit.backends import compile_graph
from tracejit.const_array import ConstArray
from tracejit.debug_print import PrintingExecutable
from tracejit.errors import ArgumentError
from tracejit.ir.graph import Graph
from tracejit.pytree import PyTreeDef, tree_flatten, tree_unflatten
from tracejit.tracer.arguments import ArgSpec


@dataclass(frozen=True)
class CallSignature:
    """How a lowered call's arguments and results are structured (`jit`'s argument spec)."""

    spec: ArgSpec  # splits a call into traced leaves and static values
    treedef: PyTreeDef  # of the traced arguments
    static: tuple  # the static arguments' values
    out_tree: PyTreeDef  # of the function's results
    prints: list = field(default_factory=list)  # hoisted debug prints (debug_print.py)
    n_outputs: int = 0  # the function's own outputs (before the printed values)


class Lowered:
    """A traced and optimized function for one signature: `as_text()`, `compile()`."""

    def __init__(self, graph: Graph, device: str, name: str, signature: CallSignature):
        self.graph = graph
        self.device = device
        self.name = name
        self.signature = signature

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
        executable = compile_graph(self.graph, self.device, self.name)
        sig = self.signature
        if sig.prints:
            executable = PrintingExecutable(executable, sig.prints, sig.n_outputs)
        return Compiled(executable, sig, self.name)


class Compiled:
    """The executable of a `Lowered`: called like the jitted function (the same argument
    structure, static arguments included), it returns the function's result structure.
    `executable` takes and returns flat lists of arrays; `source()`, `kernels()`."""

    def __init__(self, executable, signature: CallSignature, name: str = "function"):
        self.executable = executable
        self.signature = signature
        self.name = name

    def source(self) -> str:
        return self.executable.source()

    def kernels(self) -> list[str]:
        return self.executable.kernels()

    def __call__(self, *args, **kwargs):
        sig = self.signature
        call = sig.spec.split(args, kwargs)
        leaves, treedef = tree_flatten(call.dynamic)
        if treedef != sig.treedef:
            raise ArgumentError(
                f"{self.name} was compiled for arguments structured as {sig.treedef}, "
                f"called with {treedef}"
            )
        if call.static != sig.static:
            raise ArgumentError(
                f"{self.name} was compiled for static arguments {sig.static}, called with "
                f"{call.static}: lower and compile again for other static values"
            )
        arrays = [x if hasattr(x, "__cuda_array_interface__") else np.asarray(x) for x in leaves]
        outs = [ConstArray.of(o) for o in self.executable(arrays)]
        return tree_unflatten(sig.out_tree, outs)


__all__ = ["CallSignature", "Compiled", "Lowered"]
