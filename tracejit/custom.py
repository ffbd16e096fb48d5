"""`tj.custom_vjp` and `tj.custom_jvp`: functions whose derivative the user supplies.

Called on concrete arrays they just run. Called on traced values (inside `grad`, `jit`,
`vmap`, ...) they record one `custom_vjp_call` node (`ir/custom_call.py`) holding the traced
primal graph, and the forward and backward graphs traced from the user's rules when a
transformation first needs them (as JAX does): a call nothing differentiates never traces
its rules, so they need to be valid only where a derivative is asked. Rules that close over
traced values are traced at once instead, while those traces are live (custom_closure.py),
and what they raise is raised when a derivative is asked too:

>>> import numpy as np, tracejit as tj
>>> @tj.custom_vjp
... def clip_grad(x):
...     return x
>>> clip_grad.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1.0, 1.0),))
>>> tj.grad(lambda x: (3.0 * clip_grad(x)).sum())(np.ones(2))
array([1., 1.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tracejit import custom_closure
from tracejit._tree_ops import treedef_tuple
from tracejit.errors import (
    CustomRuleClosureError,
    ShapeError,
    TracejitTypeError,
    TracejitValueError,
    TracerLeakError,
    UnsupportedError,
)
from tracejit.ir import dtypes
from tracejit.ir.autodiff import joint_graph
from tracejit.ir.builder import Emitter
from tracejit.ir.custom_call import CustomCall, custom_vjp_call_p, inline_graph
from tracejit.ir.graph import Graph, Value, fresh
from tracejit.ir.linearity import first_nonlinear
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.pytree import PyTreeDef, is_pair, tree_flatten, tree_unflatten
from tracejit.tracer.arguments import abstractify
from tracejit.tracer.core import Tracer, bind
from tracejit.tracer.tracing import Traced, trace_flat

_CLOSURE_FIX = (
    "Pass that value as an explicit argument (and give its derivative in the rule), or "
    "read it in the function itself: custom functions and their rules may close over "
    "traced values (closure conversion: the derivative w.r.t. such a value is the "
    "function's own), but not over values of a trace that has ended."
)


def _trace(fun: Callable, treedef: PyTreeDef, avals, what: str, closure: bool = False) -> Traced:
    """Trace `fun(*args)`, `args` a tuple of structure `treedef` whose leaves are tracers of
    `avals`; with `closure`, the tracers it closes over are allowed (custom_closure.py)."""
    names = [f"{what} input {i}" for i in range(len(avals))]
    traced = trace_flat(fun, lambda t: (t, {}), treedef, list(avals), names, what)
    if traced.captured and not closure:
        raise CustomRuleClosureError(
            f"{what} reads a traced value of an enclosing transformation through a "
            f"closure. {_CLOSURE_FIX}"
        )
    return traced


def _avals_of(values: Sequence[Value]) -> list[tuple]:
    return [(v.shape, v.dtype, False) for v in values]


def _flat_tree(n: int) -> PyTreeDef:
    return tree_flatten(tuple(range(n)))[1]


@dataclass(frozen=True, eq=False)
class _Signature:
    """What one call's graphs are traced from, holding none of its tracers: the nondiff
    (static) arguments by position, the number of arguments, and the structure (a tuple) and
    abstract values of the differentiable ones' leaves."""

    static: dict
    n_args: int
    in_tree: PyTreeDef
    avals: tuple

    def full_args(self, diff: tuple) -> list:
        """The arguments, with the differentiable ones `diff` (tracers, when tracing)."""
        it = iter(diff)
        return [self.static[i] if i in self.static else next(it) for i in range(self.n_args)]

    def nondiff(self) -> list:
        return [self.static[i] for i in sorted(self.static)]


def _deferred(err: Exception) -> Callable:
    """Rules that raise `err` (raised while tracing them early) when a derivative is asked."""
    tb = err.__traceback__

    def rules():
        raise err.with_traceback(tb)

    return rules


class _Custom:
    """What custom_vjp and custom_jvp share: argument splitting, caching, recording."""

    kind = "custom"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        if not callable(fun):
            raise TracejitTypeError(f"{self.kind} expects a function, got {type(fun).__name__}")
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nondiff_argnums)))
        self.__name__ = getattr(fun, "__name__", "function")
        self.__doc__ = getattr(fun, "__doc__", None)
        self._calls: dict[tuple, tuple[CustomCall, PyTreeDef, list]] = {}
        self._building: set[tuple] = set()  # keys whose closure-converted rules are tracing

    def _ready(self) -> bool:
        raise NotImplementedError

    def _rules(self) -> list[Callable]:
        raise NotImplementedError

    def rule_functions(self) -> list[Callable]:
        """The function and its rules (what custom_closure.closes_over_tracers looks into)."""
        return [self.fun, *self._rules()]

    def __call__(self, *args):
        if not self._ready():
            what = "defvjp(fwd, bwd)" if self.kind == "custom_vjp" else "defjvp(jvp)"
            raise UnsupportedError(f"{self.kind} function {self.__name__!r}: call {what} first")
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise TracejitValueError(
                    f"{self.kind}: nondiff_argnums names argument {i} of {len(args)}"
                )
            if any(isinstance(x, Tracer) for x in tree_flatten(args[i])[0]):
                raise UnsupportedError(
                    f"{self.kind} {self.__name__!r}: argument {i} is in nondiff_argnums but "
                    "is traced; nondiff arguments must be static Python values"
                )
        diff = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)
        leaves, in_tree = tree_flatten(diff)
        if not any(isinstance(x, Tracer) for x in leaves):
            return self.fun(*args)  # nothing is traced: no derivative can be asked of this call
        avals = tuple(abstractify(x, f"argument leaf {i}") for i, x in enumerate(leaves))
        static = tuple(_static_key(args[i]) for i in self.nondiff_argnums)
        key = (in_tree, avals, static)
        entry = self._calls.get(key)
        if entry is None:
            static = {i: args[i] for i in self.nondiff_argnums}
            entry = self._build(_Signature(static, len(args), in_tree, avals), key)
            if not entry[2]:  # graphs reading outer tracers are valid for this call only
                self._calls[key] = entry
        call, out_tree, closed = entry
        return tree_unflatten(out_tree, bind(custom_vjp_call_p, *leaves, *closed, call=call))

    def _build(self, sig: _Signature, key) -> tuple[CustomCall, PyTreeDef, list]:
        """The call and the tracers it closes over (its operands after the explicit ones).

        The rules are traced when a transformation first needs them, unless the function or
        they close over live tracers: then now, while those traces are live, and
        closure-converted (custom_closure.py). A call made while they trace (a fwd or jvp
        usually calls the function itself) traces them on first use instead.
        """
        primal_fn = lambda *d: self.fun(*sig.full_args(d))
        primal = _trace(primal_fn, sig.in_tree, sig.avals, self.__name__, closure=True)
        name = f"{self.kind} {self.__name__}"
        eager = primal.captured or custom_closure.closes_over_tracers(*self._rules())
        if key in self._building or not eager:
            rules = lambda: self._lazy_rules(sig, primal)
            return CustomCall(name, primal.graph, rules), primal.out_tree, primal.captured
        self._building.add(key)
        try:
            closed, fwd, bwd, why = self._eager_rules(sig, primal)
        except Exception as err:  # noqa: BLE001 (raised when a derivative is asked, as lazily)
            rules = _deferred(self._closure_error(err))
            return CustomCall(name, primal.graph, rules), primal.out_tree, primal.captured
        finally:
            self._building.discard(key)
        if not closed:
            return CustomCall(name, primal.graph, lambda: (fwd, bwd, why)), primal.out_tree, []
        n, n_out = len(sig.avals), len(primal.graph.outputs)
        primal_g = custom_closure.with_inputs(primal, n, closed)
        graphs = custom_closure.closed_call_graphs(primal_g, fwd, bwd, n, n_out)
        return CustomCall(name, primal_g, lambda: (*graphs, why)), primal.out_tree, closed

    def _eager_rules(self, sig: _Signature, primal: Traced) -> tuple[list, Graph, Graph, Any]:
        """(closed-over tracers, fwd: (explicit, closed) -> outs + residuals,
        bwd: (residuals, output cts, closed) -> explicit cts, a function returning why bwd
        is not linear in the cotangents or None)."""
        raise NotImplementedError

    def _closure_error(self, err: Exception) -> Exception:
        if not isinstance(err, TracerLeakError):
            return err
        return CustomRuleClosureError(
            f"{self.kind} {self.__name__!r}: its rule reads a traced value whose trace "
            f"has ended. {_CLOSURE_FIX}"
        ).with_traceback(err.__traceback__)

    def _lazy_rules(self, sig: _Signature, primal: Traced) -> tuple[Graph, Graph, Any]:
        if primal.captured:  # a call from its own fwd, closing over tracers, differentiated
            raise CustomRuleClosureError(
                f"{self.kind} {self.__name__!r} closes over traced values and is "
                "differentiated through its own fwd (a higher-order derivative): not "
                f"supported. {_CLOSURE_FIX}"
            )
        try:
            return self._derivative_graphs(sig, primal)
        except TracerLeakError as e:
            raise self._closure_error(e) from e

    def _derivative_graphs(self, sig: _Signature, primal: Traced) -> tuple[Graph, Graph, Any]:
        raise NotImplementedError


def _static_key(x):
    try:
        hash(x)
        return x
    except TypeError:
        return ("id", id(x))


class custom_vjp(_Custom):
    """A function with a user-defined VJP: `f.defvjp(fwd, bwd)`.

    `fwd(*args) -> (out, residuals)`; `bwd(*nondiff_args, residuals, out_cotangent)` returns
    a tuple with one cotangent per differentiable argument (same structure; None for zero).
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd
        self._calls.clear()

    def _ready(self) -> bool:
        return self.fwd is not None

    def _rules(self) -> list[Callable]:
        return [self.fwd, self.bwd]

    def _derivative_graphs(self, sig: _Signature, primal: Traced) -> tuple[Graph, Graph, Any]:
        fwd, bwd = self._closure_traces(sig, primal, closure=False)
        bwd_g = _input_cotangents(bwd, sig, self.__name__)
        return fwd.graph, bwd_g, lambda: self._nonlinear(bwd_g, bwd, primal)

    def _eager_rules(self, sig: _Signature, primal: Traced) -> tuple[list, Graph, Graph, Any]:
        fwd, bwd = self._closure_traces(sig, primal)
        closed = custom_closure.union(primal, fwd, bwd)
        n_bwd = len(bwd.graph.inputs) - len(bwd.captured)
        bwd_t = Traced(custom_closure.with_inputs(bwd, n_bwd, closed), bwd.out_tree, [])
        bwd_g = _input_cotangents(bwd_t, sig, self.__name__)
        fwd_g = custom_closure.with_inputs(fwd, len(sig.avals), closed)
        return closed, fwd_g, bwd_g, lambda: self._nonlinear(bwd_g, bwd, primal)

    def _nonlinear(self, bwd_g: Graph, bwd: Traced, primal: Traced) -> str | None:
        """Why `bwd_g` (`bwd` traced, giving one cotangent per differentiable input leaf) is
        not linear in the output cotangents (ir/linearity.py), naming the function and the
        line; None when it is. A float input's cotangent must not hold a term that does not
        depend on them (an affine bwd, whose transpose drops that term)."""
        n_out = len(primal.graph.outputs)
        n_res = len(bwd.graph.inputs) - len(bwd.captured) - n_out
        ins = bwd_g.inputs
        cts = [n_res + j for j in range(n_out) if dtypes.is_inexact(ins[n_res + j].dtype)]
        outs = [v for v in bwd_g.outputs if dtypes.is_inexact(v.dtype)]
        found = first_nonlinear(Graph(ins, bwd_g.nodes, outs), cts, linear_outputs=True)
        if found is None:
            return None
        code = getattr(self.fun, "__code__", None)
        where = f" (defined at {code.co_filename}:{code.co_firstlineno})" if code else ""
        return f"custom_vjp function {self.__name__!r}{where}: its bwd {found.describe('the cotangent')}"

    def _closure_traces(self, sig: _Signature, primal: Traced, closure=True) -> tuple:
        """The traced fwd and bwd (closing over tracers only with `closure`)."""
        name = self.__name__
        fwd_fn = lambda *d: self.fwd(*sig.full_args(d))
        fwd = _trace(fwd_fn, sig.in_tree, sig.avals, f"{name} fwd", closure)
        tree = fwd.out_tree
        if not is_pair(tree) or tree.children()[0] != primal.out_tree:
            raise TracejitTypeError(
                f"custom_vjp {name!r}: fwd must return (output, residuals) with the output "
                f"structured as the function's ({primal.out_tree}), got {tree}"
            )
        n_out = len(primal.graph.outputs)
        res_avals = _avals_of(fwd.graph.outputs[n_out:])
        res_tree = tree.children()[1]
        nondiff = sig.nondiff()

        def bwd_flat(*leaves):
            res = tree_unflatten(res_tree, leaves[: len(res_avals)])
            cts = tree_unflatten(primal.out_tree, leaves[len(res_avals) :])
            return self.bwd(*nondiff, res, cts)

        flat = _flat_tree(len(res_avals) + n_out)
        bwd_avals = res_avals + _avals_of(primal.graph.outputs)
        return fwd, _trace(bwd_flat, flat, bwd_avals, f"{name} bwd", closure)


def _input_cotangents(bwd: Traced, sig: _Signature, name: str) -> Graph:
    """The bwd graph with exactly one output per differentiable input leaf, typed like it."""
    tree, n_diff = bwd.out_tree, len(sig.in_tree.children())
    if tree.node_data() != (tuple, None) or len(tree.children()) != n_diff:
        raise TracejitTypeError(
            f"custom_vjp {name!r}: bwd must return a tuple with one cotangent per "
            f"differentiable argument ({n_diff}), got {tree}"
        )
    graph = Graph(list(bwd.graph.inputs), list(bwd.graph.nodes), [])
    b = Emitter(graph)
    outs = iter(bwd.graph.outputs)
    flat_avals = iter(sig.avals)
    for i, (arg_tree, sub) in enumerate(zip(sig.in_tree.children(), tree.children())):
        zero = _zero_leaves(sub, arg_tree)
        if zero is None:
            raise TracejitTypeError(
                f"custom_vjp {name!r}: bwd's cotangent {i} has structure {sub}, "
                f"the argument has {arg_tree} (None stands for a zero cotangent)"
            )
        for is_zero in zero:
            shape, dtype, _ = next(flat_avals)
            ct = b.full(0, Value(shape, dtype)) if is_zero else next(outs)
            if tuple(ct.shape) != tuple(shape):
                raise ShapeError(
                    f"custom_vjp {name!r}: bwd returned a cotangent of shape {ct.shape} for "
                    f"argument {i} of shape {shape}"
                )
            graph.outputs.append(ct if ct.dtype == dtype else b.convert(ct, dtype=dtype))
    return graph


def _zero_leaves(ct: PyTreeDef, arg: PyTreeDef) -> list[bool] | None:
    """Per leaf of `arg`, whether `ct` (arg's structure, None for zero subtrees) has a zero
    there; None when the structures do not fit."""
    ct_data, arg_data = ct.node_data(), arg.node_data()
    if ct_data == (type(None), None):
        return [True] * arg.num_leaves
    if ct_data is None or arg_data is None:
        return [False] if ct_data is arg_data else None
    if ct_data != arg_data or len(ct.children()) != len(arg.children()):
        return None
    out: list[bool] = []
    for c, a in zip(ct.children(), arg.children()):
        sub = _zero_leaves(c, a)
        if sub is None:
            return None
        out += sub
    return out


class custom_jvp(_Custom):
    """A function with a user-defined JVP: `@f.defjvp` on `jvp(primals, tangents)`.

    `jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)`, linear in `tangents`.
    Reverse mode uses its transpose, so `grad`, `vjp` and `jvp` all follow the rule.
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable | None = None

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        self._calls.clear()
        return jvp

    def _ready(self) -> bool:
        return self.jvp is not None

    def _rules(self) -> list[Callable]:
        return [self.jvp]

    def _derivative_graphs(self, sig: _Signature, primal: Traced) -> tuple[Graph, Graph, Any]:
        """fwd saves the inputs; bwd is the transpose of the user's JVP at those inputs
        (linear in the cotangent, as the JVP is in the tangent)."""
        g = primal.graph
        fwd = Graph(list(g.inputs), list(g.nodes), list(g.outputs) + list(g.inputs))
        jvp = self._trace_jvp(sig, primal, closure=False)
        return fwd, _transpose_tangents(jvp.graph, len(sig.avals), len(g.outputs)), _linear

    def _eager_rules(self, sig: _Signature, primal: Traced) -> tuple[list, Graph, Graph, Any]:
        jvp = self._trace_jvp(sig, primal, closure=True)
        closed = custom_closure.union(primal, jvp)
        n = len(sig.avals)
        g = custom_closure.with_inputs(primal, n, closed)
        fwd = Graph(list(g.inputs), list(g.nodes), list(g.outputs) + list(g.inputs[:n]))
        jvp_g = custom_closure.with_inputs(jvp, 2 * n, closed)
        return closed, fwd, _transpose_tangents(jvp_g, n, len(g.outputs), len(closed)), _linear

    def _trace_jvp(self, sig: _Signature, primal: Traced, closure: bool) -> Traced:
        """The user's jvp traced on (primals, tangents) of the differentiable leaves."""
        avals = sig.avals
        n = len(avals)
        nondiff = sig.nondiff()
        tangent_avals = [(s, d, False) for s, d, _ in avals]
        diff_tree = sig.in_tree

        def jvp_flat(*leaves):
            primals = tree_unflatten(diff_tree, leaves[:n])
            tangents = tree_unflatten(diff_tree, leaves[n:])
            return self.jvp(*nondiff, primals, tangents)

        name = self.__name__
        flat = _flat_tree(2 * n)
        jvp = _trace(jvp_flat, flat, list(avals) + tangent_avals, f"{name} jvp", closure)
        want = treedef_tuple((primal.out_tree, primal.out_tree))
        if jvp.out_tree != want:
            raise TracejitTypeError(
                f"custom_jvp {name!r}: the jvp must return (output, tangent) structured as "
                f"{want}, got {jvp.out_tree}"
            )
        return jvp


def _linear() -> str | None:
    """Why a custom_jvp's bwd is not linear in its cotangent: never (it is the transpose of
    the jvp, linear in the tangent)."""
    return None


def _transpose_tangents(jvp: Graph, n_in: int, n_out: int, n_closed: int = 0) -> Graph:
    """(primals, output cts, closed) -> input cts: the VJP of the tangent map, taken at
    zero tangents (`jvp` takes primals, tangents, then `n_closed` closed-over values).

    The tangent outputs are linear in the tangent inputs, so this is their transpose.
    """
    wrt = [n_in + i for i in range(n_in) if dtypes.is_float(jvp.inputs[i].dtype)]
    seeded = [n_out + j for j in range(n_out) if dtypes.is_float(jvp.outputs[j].dtype)]
    joint = joint_graph(jvp, wrt, seeded)
    primals = [Value(v.shape, v.dtype) for v in jvp.inputs[:n_in]]
    cts = [Value(v.shape, v.dtype) for v in jvp.outputs[:n_out]]
    closed = fresh(jvp.inputs[2 * n_in :])
    graph = Graph(primals + cts + closed, [], [])
    b = Emitter(graph)
    zeros = [b.full(0, v) for v in jvp.inputs[n_in : 2 * n_in]]
    seeds = [cts[j - n_out] for j in seeded]
    results = inline_graph(graph.nodes, joint, primals + zeros + closed + seeds)
    in_cts = iter(results[len(jvp.outputs) :])
    for i, v in enumerate(jvp.inputs[:n_in]):
        float_in = n_in + i in wrt
        graph.outputs.append(next(in_cts) if float_in else b.full(0, v))
    return remove_dead_nodes(graph)


__all__ = ["custom_jvp", "custom_vjp"]
