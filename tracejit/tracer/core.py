"""Tracing: `Trace` records primitives into a `Graph`; `Tracer` is the array users touch.

`bind(prim, *args, **attrs)` is the one entry point every `tracejit.numpy` function uses:
with no tracer among the arguments it runs the primitive's NumPy implementation at once
(eager mode); otherwise it records a node in the innermost trace the tracers belong to.
Tracers of an enclosing trace are lifted into the inner one as captured inputs, so inner
transformations (grad inside jit) treat them as constants.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from tracejit.errors import (
    ConcretizationError,
    ShapeError,
    TracejitError,
    TracejitTypeError,
    TracerLeakError,
    UnsupportedError,
    user_frame,
)
from tracejit.ir import dtypes
from tracejit.ir.builder import GraphBuilder
from tracejit.ir.graph import ConstValue, Graph, Value
from tracejit.ir.interpret import apply_primitive
from tracejit.ir.primitives import Primitive, get

_levels = itertools.count()


class Trace:
    """Records nodes into one graph. Active from creation until `finish`."""

    defer_joints = False  # grad may record its joint graph as one node (cache/deferred.py)

    def __init__(self, name: str = "function"):
        self.level = next(_levels)
        self.name = name
        self.graph = Graph()
        self.builder = GraphBuilder(self.graph)  # interns: an equal node is recorded once
        self.active = True
        self.input_names: dict[Value, str] = {}
        self.captured: list[tuple[Tracer, Value]] = []  # (outer tracer, inner input)
        self._captured_ids: dict[int, Value] = {}
        self._consts: dict[int, tuple[Any, Value]] = {}
        self.scalar_consts: dict[tuple, Tracer] = {}  # tracejit.numpy's Python-scalar operands

    def new_input(self, shape, dtype, weak: bool = False, name: str = "") -> Tracer:
        v = Value(shape, dtype, weak)
        self.graph.inputs.append(v)
        self.input_names[v] = name
        return Tracer(self, v, None)

    def to_value(self, x) -> Value:
        """The Value standing for `x` in this trace: own tracer, lifted outer tracer or const."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._value
            if not x._trace.active:
                raise leak_error(x)
            key = id(x)
            if key not in self._captured_ids:
                v = Value(x.shape, x.dtype, x.weak)
                self._captured_ids[key] = v
                self.captured.append((x, v))
                self.input_names[v] = f"a value captured from the enclosing {x._trace.name}"
            return self._captured_ids[key]
        key = id(x)
        if key in self._consts:
            return self._consts[key][1]
        arr = np.asarray(x)
        dtypes.canonical(arr.dtype)
        (out,) = self.record(get("const"), [], {"value": ConstValue(arr)}, source=None)
        self._consts[key] = (x, out)  # keep x alive so its id stays unique
        return out

    def record(
        self, prim: Primitive, inputs: list[Value], attrs: dict, source, phase: str = "forward"
    ) -> list[Value]:
        """The outputs of `prim(*inputs, **attrs)` in this trace (an equal node's if any)."""
        return self.builder.bind(prim, inputs, attrs, source, phase)

    def finish(self, outputs: list) -> Graph:
        """End the trace; `outputs` may hold tracers or concrete values (made constants)."""
        self.graph.outputs = [self.to_value(o) for o in outputs]
        self.graph.inputs = self.graph.inputs + [v for _, v in self.captured]
        self.active = False
        # Tracers that outlive the trace keep it alive, often in a reference cycle that only
        # the cyclic collector frees: drop the interning table now (a node per key; for an
        # unrolled 400-step RNN, 30K tuples the collector would otherwise have to find).
        self.builder = None
        self.scalar_consts = {}
        return self.graph

    def depends_on(self, value: Value) -> list[str]:
        """Names of the inputs `value` depends on (computed only when an error is raised)."""
        producers = self.graph.producers()
        seen, stack, names = set(), [value], []
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.input_names:
                names.append(self.input_names[v])
            elif v in producers:
                stack.extend(producers[v].inputs)
        return sorted(n for n in names if n)


def leak_error(t: Tracer) -> TracerLeakError:
    where = f" It was created at {t._origin}." if t._origin else ""
    return TracerLeakError(
        f"A traced value {t._value.type_str} from {t._trace.name} was used after its trace "
        f"ended.{where} Tracers must not escape the traced function (through a global, a "
        "closure or an attribute): return the value from the function instead."
    )


def innermost_trace(xs) -> Trace | None:
    """The innermost (highest-level) trace among the tracers in `xs`; None if none is one."""
    traces = [x._trace for x in xs if isinstance(x, Tracer)]
    return max(traces, key=lambda t: t.level) if traces else None


def bind(prim: Primitive | str, *args, **attrs):
    """Apply a primitive to arrays or tracers; returns one result or a list (multi-output)."""
    if type(prim) is str:
        prim = get(prim)
    trace = None  # the innermost trace among the arguments' (every traced operation: kept lean)
    for a in args:
        if type(a) is Tracer:
            t = a._trace
            if not t.active:
                raise leak_error(a)
            if trace is None or t.level > trace.level:
                trace = t
    if trace is None:
        try:
            outs = apply_primitive(prim, [np.asarray(a) for a in args], attrs)
        except (ShapeError, UnsupportedError) as err:
            raise err.add_source(user_frame()) from None
        return outs if prim.multiple_results else outs[0]
    inputs = [
        a._value if type(a) is Tracer and a._trace is trace else trace.to_value(a) for a in args
    ]
    source = user_frame()
    try:
        outs = trace.record(prim, inputs, attrs, source)
    except (ShapeError, UnsupportedError) as err:
        raise err.add_source(source) from None
    if prim.multiple_results:
        return [Tracer(trace, v, source) for v in outs]
    return Tracer(trace, outs[0], source)


class Tracer:
    """A traced array: knows its shape and dtype, records every operation applied to it.

    Its operators, array methods and NumPy protocols (`__array_ufunc__`,
    `__array_function__`) are installed by `tracejit.numpy` (numpy/_tracer_methods.py): the
    tracer does not import the NumPy layer built on it.
    """

    __slots__ = ("_origin", "_trace", "_value")
    __array_priority__ = 1000  # NumPy defers binary operators with arrays to us

    def __init__(self, trace: Trace, value: Value, origin: str | None):
        self._trace = trace
        self._value = value
        self._origin = origin

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    weak = property(lambda self: self._value.weak)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.dtype.itemsize)

    def __repr__(self) -> str:
        return f"Tracer<{self._value.type_str}>"

    def __str__(self) -> str:
        return (
            f"Tracer<{self._value.type_str}> (a value being traced: its contents exist only "
            "when the compiled function runs; to see them, use tj.debug.print)"
        )

    def __len__(self) -> int:
        if not self.shape:
            raise TracejitTypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TracejitTypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    # -- concretization: Python needs a value the trace does not have
    def _concretization_error(self, what: str, to_array: bool = False) -> ConcretizationError:
        names = self._trace.depends_on(self._value) if self._trace.active else []
        dep = f" that depends on {', '.join(repr(n) for n in names)}" if names else ""
        items = [n for n in names if re.search(r"\[\d+\]$", n)] if to_array else []
        advice = (
            f"{items[0]!r} is an element of a list or tuple argument: a list is a pytree of "
            f"separate traced values, not an array. Pass an array instead (convert it with "
            f"np.asarray({items[0].split('[')[0]}) before the call), or combine the elements "
            "inside with tnp.asarray or tnp.stack (np.asarray cannot trace)."
            if items
            else "Use tnp.where(cond, a, b) for a data-dependent choice, or mark the argument "
            "static with static_argnums/static_argnames."
        )
        return ConcretizationError(
            f"{what} of a traced value {self._value.type_str}{dep}: its value is not known "
            f"while tracing. {advice}"
        )

    def __bool__(self):
        raise self._concretization_error("bool()")

    def __int__(self):
        raise self._concretization_error("int()")

    def __float__(self):
        raise self._concretization_error("float()")

    def __complex__(self):
        raise self._concretization_error("complex()")

    def __index__(self):
        raise self._concretization_error("Using as an index (__index__)")

    def __array__(self, dtype=None, copy=None):
        raise self._concretization_error("Converting to a NumPy array (np.asarray)", True)

    def tolist(self):
        raise self._concretization_error("tolist()")

    def item(self, *args):
        raise self._concretization_error("item()")


__all__ = ["Trace", "TracejitError", "Tracer", "bind", "user_frame"]
