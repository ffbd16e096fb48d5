"""`tj.jvp` / `tj.linearize` by forward mode, for functions that reverse mode cannot
differentiate (a `while_loop`, anywhere, nested regions included).

`jacobians.py` first tries the transposed pullback (one forward, reused for every tangent);
when reverse mode meets a `while_loop` it comes here: the function is traced once and
`ir.forward.jvp_graph` gives one graph computing outputs and tangents together, which runs
eagerly (NumPy) or inlines into an enclosing trace like every transformation's graph.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tracejit.config import config
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.ir import dtypes
from tracejit.ir.forward import jvp_graph
from tracejit.ir.graph import Value
from tracejit.ir.passes import optimize
from tracejit.pytree import is_pair, tree_flatten, tree_unflatten
from tracejit.tracer.core import Tracer, bind
from tracejit.tracer.tracing import inline
from tracejit.transforms import _check_float_inputs, _shape, _Traceable


def _dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, (Tracer, Value)) else np.asarray(x).dtype


def check_float_outputs(leaves) -> None:
    """Every output has a tangent: float or complex (JAX's tangents of ints are float0)."""
    for leaf in leaves:
        if not dtypes.is_inexact(_dtype(leaf)):
            raise TracejitTypeError(
                f"jvp: an output of dtype {_dtype(leaf)} has no tangent; return floats"
            )


def check_tangents(p_leaves, p_tree, tangents) -> list:
    """The tangent leaves, checked against the primals' structure and shapes."""
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if t_tree != p_tree:
        raise TracejitTypeError(f"jvp: tangents {t_tree} do not match primals {p_tree}")
    for p, t in zip(p_leaves, t_leaves):
        if _shape(p) != _shape(t):
            raise TracejitValueError(f"jvp: tangent shape {_shape(t)} differs from {_shape(p)}")
    return t_leaves


class ForwardJVP:
    """`fun` at `primals`, traced once, with its forward-mode graph."""

    def __init__(self, fun: Callable, primals: tuple, has_aux: bool):
        traced, self.leaves, names = _Traceable(fun, "jvp").trace(primals, {}, range(len(primals)))
        self.traced, self.has_aux = traced, has_aux
        tree = traced.out_tree
        if has_aux and not is_pair(tree):
            raise TracejitTypeError("jvp(has_aux=True) needs the function to return (out, aux)")
        self.main_tree = tree.children()[0] if has_aux else tree
        n_main = self.main_tree.num_leaves
        graph = traced.graph
        check_float_outputs(graph.outputs[:n_main])
        wrt = range(len(self.leaves))
        _check_float_inputs(graph, wrt, names, "jvp")
        graph = optimize(graph, config.verify_graphs, stage="pre_grad")
        self.graph = optimize(jvp_graph(graph, wrt), config.verify_graphs)
        self.p_leaves, self.p_tree = tree_flatten(tuple(primals))

    def _split(self, values: list, tangents: list | None) -> tuple:
        n_out = len(self.traced.graph.outputs)
        every = tree_unflatten(self.traced.out_tree, values[:n_out])
        out, aux = (every[0], every[1]) if self.has_aux else (every, None)
        if tangents is None:
            return out, aux, None
        return out, aux, tree_unflatten(self.main_tree, tangents[: self.main_tree.num_leaves])

    def _tangent_leaves(self, tangents) -> list:
        t_leaves = check_tangents(self.p_leaves, self.p_tree, tangents)
        ins = self.traced.graph.inputs
        return [
            bind("convert", t, dtype=v.dtype) if isinstance(t, Tracer) and t.dtype != v.dtype else t
            for t, v in zip(t_leaves, ins)
        ]

    def jvp(self, tangents) -> tuple:
        """`(out, tangent_out)` (and `aux`) in one evaluation."""
        args = self.leaves + self.traced.captured + self._tangent_leaves(tangents)
        values = inline(self.graph, args)
        n_out = len(self.traced.graph.outputs)
        out, aux, t_out = self._split(values, values[n_out:])
        return (out, t_out, aux) if self.has_aux else (out, t_out)

    def linearize(self) -> tuple:
        """`(out, f_jvp)` (and `aux`): the primal now; `f_jvp` re-runs it with the tangents."""
        values = inline(self.traced.graph, self.leaves + self.traced.captured)
        out, aux, _ = self._split(values, None)

        def f_jvp(*tangents):
            return self.jvp(tangents)[1]

        return (out, f_jvp, aux) if self.has_aux else (out, f_jvp)


__all__ = ["ForwardJVP", "check_float_outputs", "check_tangents"]
