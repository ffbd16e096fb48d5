"""The functional IR: a `Graph` of `Node`s over typed `Value`s, its printer and verifier.

A graph is SSA: `inputs`, topologically ordered `nodes`, `outputs`. Printing follows the
jaxpr style, one binder per line, every binder typed:

    { lambda a:f32[4,8] b:f32[8,2] . let
        c:f32[4,2] = matmul a b
        d:f32[] = reduce_sum[axes=(0, 1)] c
      in (d,) }
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tracejit.errors import InternalError
from tracejit.ir import dtypes


class Shaped:
    """What follows from a static `shape` and `dtype`: shared by `Value` and kernel `Buffer`s.

    >>> Value((2, 3), "float32").type_str
    'f32[2,3]'
    """

    __slots__ = ()
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(math.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def type_str(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{dtypes.short_name(self.dtype)}[{dims}]"


class Value(Shaped):
    """An SSA value with a static shape and dtype. `weak` marks a Python-scalar origin."""

    __slots__ = ("__weakref__", "dtype", "shape", "weak")

    def __init__(self, shape: tuple[int, ...], dtype, weak: bool = False):
        self.shape = tuple(map(int, shape))
        self.dtype = np.dtype(dtype)
        self.weak = bool(weak)

    def __repr__(self) -> str:
        return f"Value({self.type_str}{', weak' if self.weak else ''})"


class ConstValue:
    """A hashable wrapper for an array attribute (e.g. the payload of a `const` node).

    Equality is bit for bit: `0.0` and `-0.0`, or NaNs with different payloads, differ (the
    graph builder merges equal constants, and must never merge those).
    """

    __slots__ = ("_hash", "array")

    def __init__(self, array):
        arr = np.array(array, copy=True)  # a snapshot: never freeze or alias the user's array
        arr.setflags(write=False)
        self.array = arr
        self._hash = hash((arr.shape, arr.dtype.str, arr.tobytes()))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        # Not the stored hash: bytes hash differently in another process (PYTHONHASHSEED), and
        # an unpickled constant must equal (and intern with) one made here
        return ConstValue, (self.array,)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, ConstValue)
            and self._hash == other._hash
            and self.array.shape == other.array.shape
            and self.array.dtype == other.array.dtype
            and self.array.tobytes() == other.array.tobytes()
        )

    def __repr__(self) -> str:
        if self.array.ndim == 0:
            return repr(self.array.item())
        if self.array.size <= 4:
            return np.array2string(self.array, separator=",").replace("\n", "")
        return f"<{dtypes.short_name(self.array.dtype)}{list(self.array.shape)} array>"


@dataclass(eq=False)
class Node:
    """One application of a primitive: `outputs = prim(*inputs, **attrs)`."""

    prim: Any  # tracejit.ir.primitives.Primitive
    inputs: list[Value]
    attrs: dict[str, Any]
    outputs: list[Value]
    source: str | None = None  # the user's source line, "file.py:12 (fn)"
    phase: str = "forward"  # "backward" for nodes autodiff adds (for debug_nans reports)


@dataclass(eq=False)
class Graph:
    inputs: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)

    def __str__(self) -> str:
        return format_graph(self)

    def __repr__(self) -> str:
        return format_graph(self)

    def producers(self) -> dict[Value, Node]:
        return {v: n for n in self.nodes for v in n.outputs}

    def users(self) -> dict[Value, list[Node]]:
        out: dict[Value, list[Node]] = {}
        for n in self.nodes:
            for v in n.inputs:
                out.setdefault(v, []).append(n)
        return out


def fresh(values) -> list[Value]:
    """New values of the types of `values` (shape, dtype, weakness)."""
    return [Value(v.shape, v.dtype, v.weak) for v in values]


def dependents(nodes, seeds) -> set[Value]:
    """`seeds` and every value that `nodes` (in order) compute from one of them."""
    found = set(seeds)
    for node in nodes:
        if any(v in found for v in node.inputs):
            found.update(node.outputs)
    return found


def inline_graph(nodes: list[Node], graph: Graph, inputs, phase: str | None = None) -> list[Value]:
    """Append to `nodes` copies of `graph`'s nodes (fresh output Values) reading `inputs`
    (one per graph input); the copies' outputs standing for `graph.outputs`. `phase`, when
    given, marks every copy (else each keeps its own)."""
    env: dict[Value, Value] = dict(zip(graph.inputs, inputs))
    for node in graph.nodes:
        outs = fresh(node.outputs)
        ins = [env[v] for v in node.inputs]
        nodes.append(Node(node.prim, ins, node.attrs, outs, node.source, phase or node.phase))
        env.update(zip(node.outputs, outs))
    return [env[v] for v in graph.outputs]


def _names():
    letters = "abcdefghijklmnopqrstuvwxyz"
    for length in itertools.count(1):
        for combo in itertools.product(letters, repeat=length):
            yield "".join(combo)


def _format_attr(value) -> str:
    if isinstance(value, np.dtype):
        return dtypes.short_name(value)
    if isinstance(value, tuple):
        return (
            "(" + ", ".join(_format_attr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
        )
    return repr(value)


def format_graph(graph: Graph) -> str:
    """The jaxpr-like text of `graph`: compact, deterministic, diffs cleanly."""
    gen = _names()
    names: dict[Value, str] = {}
    used = {v for n in graph.nodes for v in n.inputs} | set(graph.outputs)

    def bind(v: Value) -> str:
        if v not in used:
            return f"_:{v.type_str}"
        names[v] = next(gen)
        return f"{names[v]}:{v.type_str}"

    def ref(v: Value) -> str:
        return names.get(v, "?")

    header = " ".join(bind(v) for v in graph.inputs)
    lines = ["{ lambda " + header + " . let"]
    for node in graph.nodes:
        outs = " ".join(bind(v) for v in node.outputs)
        attrs = ""
        if node.attrs:
            attrs = (
                "["
                + ", ".join(f"{k}={_format_attr(v)}" for k, v in sorted(node.attrs.items()))
                + "]"
            )
        args = " ".join(ref(v) for v in node.inputs)
        lines.append(f"    {outs} = {node.prim.name}{attrs}{' ' if args else ''}{args}")
    outs = ", ".join(ref(v) for v in graph.outputs)
    lines.append(f"  in ({outs}{',' if len(graph.outputs) == 1 else ''}) }}")
    return "\n".join(lines)


class VerifyError(InternalError):
    """A graph broke an IR invariant (a tracejit bug, never a user error)."""


def verify(graph: Graph) -> None:
    """Check every invariant: defined-before-use, single definition, types match the rules."""
    from tracejit.ir.regions import region_graphs  # regions.py imports this module

    defined: set[Value] = set()
    for v in graph.inputs:
        if v in defined:
            raise VerifyError(f"input {v} listed twice")
        defined.add(v)
    for i, node in enumerate(graph.nodes):
        for v in node.inputs:
            if v not in defined:
                raise VerifyError(f"node {i} ({node.prim.name}) uses {v} before it is defined")
        expected = node.prim.abstract_eval(
            [(v.shape, v.dtype, v.weak) for v in node.inputs], node.attrs
        )
        if len(expected) != len(node.outputs):
            raise VerifyError(
                f"node {i} ({node.prim.name}) has {len(node.outputs)} outputs, rule says {len(expected)}"
            )
        for v, (shape, dtype, _) in zip(node.outputs, expected):
            if v.shape != tuple(shape) or v.dtype != np.dtype(dtype):
                raise VerifyError(
                    f"node {i} ({node.prim.name}) output {v.type_str} disagrees with its rule "
                    f"({dtypes.short_name(dtype)}{list(shape)})"
                )
            if v in defined:
                raise VerifyError(f"node {i} ({node.prim.name}) redefines {v}")
            defined.add(v)
        for sub in region_graphs(node):  # closed sub-graphs (ir/regions.py): own scope
            verify(sub)
    for v in graph.outputs:
        if v not in defined:
            raise VerifyError(f"output {v} is never defined")
