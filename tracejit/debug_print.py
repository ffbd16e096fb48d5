"""`tj.debug.print(fmt, *args, **kwargs)`: print values from inside traced code at run time.

Eagerly it prints at once. Traced, it records a `debug_print` node with no outputs (the
dead-code passes keep nodes without outputs: they exist for their effect); the reference
interpreter prints when it reaches the node, and `jit` hoists the printed values into extra
outputs of the compiled program and prints them after each call, on every device, so a
jitted function prints its runtime values, not tracers. The format is `str.format`'s.

>>> import numpy as np, tracejit as tj
>>> f = tj.jit(lambda x: tj.debug.print("sum={s}", s=x.sum()) or x * 2.0)
>>> _ = f(np.arange(3.0))
sum=3.0
"""

from __future__ import annotations

import builtins

from tracejit.devices import device_get
from tracejit.errors import TracejitTypeError
from tracejit.ir.autodiff import VJP_RULES, zero_vjp
from tracejit.ir.graph import Graph
from tracejit.ir.primitives import OPAQUE, register
from tracejit.pytree import PyTreeDef, tree_flatten, tree_unflatten
from tracejit.tracer.core import Tracer, bind


def _show(fmt: str, tree: PyTreeDef, leaves) -> None:
    args, kwargs = tree_unflatten(tree, list(leaves))
    builtins.print(fmt.format(*args, **kwargs), flush=True)


def _rule(avals, fmt: str, tree: PyTreeDef):
    return []


def _impl(*arrays, fmt: str, tree: PyTreeDef):
    _show(fmt, tree, arrays)
    return ()


debug_print_p = register(
    "debug_print",
    OPAQUE,
    _rule,
    _impl,
    multiple_results=True,
    rules={VJP_RULES: zero_vjp},  # no outputs: nothing to differentiate
)


def debug_print(fmt: str, *args, **kwargs) -> None:
    """Print `fmt.format(*args, **kwargs)` with the runtime values of traced arrays."""
    if not isinstance(fmt, str):
        raise TracejitTypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    leaves, tree = tree_flatten((args, kwargs))
    if not any(isinstance(x, Tracer) for x in leaves):
        _show(fmt, tree, leaves)
        return
    bind(debug_print_p, *leaves, fmt=fmt, tree=tree)


def hoist_prints(graph: Graph) -> tuple[Graph, list[tuple[str, PyTreeDef, int]]]:
    """`graph` without its print nodes, their operands appended as outputs; the prints."""
    prints = [n for n in graph.nodes if n.prim is debug_print_p]
    if not prints:
        return graph, []
    nodes = [n for n in graph.nodes if n.prim is not debug_print_p]
    extra = [v for n in prints for v in n.inputs]
    specs = [(n.attrs["fmt"], n.attrs["tree"], len(n.inputs)) for n in prints]
    return Graph(list(graph.inputs), nodes, list(graph.outputs) + extra), specs


class PrintingExecutable:
    """Runs a compiled program whose last outputs are hoisted print operands; prints them."""

    def __init__(self, inner, prints: list[tuple[str, PyTreeDef, int]], n_outputs: int):
        self.inner = inner
        self.prints = prints
        self.n_outputs = n_outputs

    def __call__(self, arrays, outs=None):
        outs = self.inner(arrays) if outs is None else self.inner(arrays, outs)
        extra = iter(outs[self.n_outputs :])
        for fmt, tree, n in self.prints:  # GPU arrays are printed as their host copies
            _show(fmt, tree, [device_get(next(extra)) for _ in range(n)])
        return outs[: self.n_outputs]

    def __getattr__(self, name):
        return getattr(self.inner, name)  # source(), kernels(), ...


__all__ = ["PrintingExecutable", "debug_print", "hoist_prints"]
