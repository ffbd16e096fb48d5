"""The primitive registry: the one source of truth about every primitive.

A `Primitive` carries its name, kind, shape/dtype rule, NumPy reference implementation, cost
(of recomputing it per element) and fusion class (how ir/fusion.py treats its nodes). Its
other rules live in `RuleTable`s keyed by the `Primitive` object, one table per
transformation or backend (autodiff.VJP_RULES, batching.BATCH_RULES, c_render.C_RULES); every
table registers rules the same way, `@table.register(prim_or_name, ...)`, and `register(...,
rules={table: rule})` registers a primitive with all its rules in one entry. The set stays
small, like jax.lax: `tracejit.numpy` builds every NumPy function from these.

Adding an elementwise primitive is one entry:

    cube = register("cube", ELEMENTWISE, elementwise_rule("cube", FLOAT), lambda x: x**3,
                    rules={VJP_RULES: cube_vjp, C_RULES: lambda args, *_: f"({args[0]}...)"})

Its batching rule comes with its kind (one rule batches every elementwise primitive). The
built-in ones are such entries too, by family in ir/elementwise_ops/ (`elementwise_op`, which
also names the NumPy functions tracejit.numpy builds from the entry).
tests/backend/test_new_primitives.py adds `cube` this way and checks it traced,
differentiated, batched and compiled on every device under test (`cpu`, and `cuda` on a GPU
or the CUDA emulator); tests/unit/test_registry.py walks `PRIMITIVES` and fails on any
primitive missing a rule.

Adding a primitive with its own kernel is one module, one entry: fusion class KERNEL (fusion
keeps it a step of its own), and a rule in each backend's kernel table, keyed like the rest:

    register("name", OPAQUE, shape_rule, numpy_impl, fusion=KERNEL, rules={
        VJP_RULES: vjp,                # autodiff.py
        BATCH_RULES: batch,            # batching/rules.py (elementwise ones have a default)
        CPU_KERNELS: cpu_kernel,       # backend_cpu/gather.py: (statement, helper functions)
        CUDA_KERNELS: cuda_kernel,     # backend_cuda/gather.py: (params, units, unit body) or (text, Launch)
    })

The module sits above the backends (it imports their tables) and is imported by the package
(tracejit/__init__.py); `test_twice` in tests/backend/test_new_primitives.py is such an
entry, run on every device.

Abstract values are `(shape, dtype, weak)` triples. Elementwise primitives take operands of
one shape and one dtype: broadcasting and promotion happen in `tracejit.numpy`, so every
later stage (autodiff, fusion, codegen) sees explicit `broadcast_in_dim` and `convert` nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tracejit.errors import (
    ShapeError,
    TracejitKeyError,
    TracejitTypeError,
    TracejitValueError,
    UnsupportedError,
)
from tracejit.ir import dtypes

AVal = tuple  # (shape: tuple[int, ...], dtype: np.dtype, weak: bool)

ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
LAYOUT = "layout"
MATMUL = "matmul"
GATHER = "gather-scatter"
RANDOM = "random"
CREATION = "creation"
OPAQUE = "opaque"
CONTROL = "control"  # loops and branches with region bodies (ir/control.py)


# Fusion classes: how ir/fusion.py treats a node of the primitive.
INLINE = "inline"  # an elementwise expression, recomputed inside each kernel (a C rendering)
FOLDED = "folded"  # layout ops and iota: folded into the affine index of a kernel's loads
RESHAPE = "reshape"  # folded when it only adds or removes size-1 dims, else a buffer view
REDUCE = "reduce"  # starts a reduction kernel (an expression when it reduces no axis)
CONSTANT = "const"  # a literal when scalar, else a constant buffer
LIBRARY = "matmul"  # a library call (BLAS / cuBLAS)
PARTIAL = "partial"  # kernels writing regions of one output buffer (concatenate, pad)
KERNEL = "kernel"  # a step with its own kernel in each backend (ir/gather_plan.py)
HOST = "host"  # runs its NumPy reference on the host (a callback step)
LOOP = "control"  # loops and branches: compiled region by region (backend_*/loops.py)
FUSION_CLASSES = (INLINE, FOLDED, RESHAPE, REDUCE, CONSTANT, LIBRARY, PARTIAL, KERNEL, HOST, LOOP)
_DEFAULT_FUSION = {
    ELEMENTWISE: INLINE,
    REDUCTION: REDUCE,
    LAYOUT: FOLDED,
    MATMUL: LIBRARY,
    CONTROL: LOOP,
    CREATION: HOST,
}

# Relative cost of recomputing a primitive per element, in simple arithmetic ops. One libm call
# (a vector exp is ~10-20 instructions) is worth a store and a reload: fusion materializes an
# inlined value read by two kernels, and the CPU row writer keeps a value on a scratch row,
# once its expression costs TRANSCENDENTAL.
TRANSCENDENTAL = 8


@dataclass(frozen=True, eq=False)
class Primitive:
    name: str
    kind: str
    rule: Callable[..., list[AVal]]  # (in_avals, **attrs) -> out avals
    impl: Callable[..., Any]  # (*np arrays, **attrs) -> array or tuple of arrays
    multiple_results: bool = False
    cost: int = 0  # per-element cost when inlined (TRANSCENDENTAL for a libm call)
    fusion: str = HOST  # one of FUSION_CLASSES
    # Has an effect beyond its result (a collective communicates): two equal nodes are two
    # operations, so the graph builder never merges them (ir/builder.py).
    effectful: bool = False

    def abstract_eval(self, in_avals: list[AVal], attrs: dict) -> list[AVal]:
        out = self.rule(list(in_avals), **attrs)
        return list(out) if self.multiple_results else [out]

    def rules(self) -> dict[str, Callable]:
        """This primitive's rule in each table that has one: `{table.what: rule}`."""
        found = ((t.what, t.get(self)) for t in RULE_TABLES)
        return {what: rule for what, rule in found if rule is not None}

    def __repr__(self) -> str:
        return f"Primitive({self.name})"


PRIMITIVES: dict[str, Primitive] = {}


class RuleTable:
    """One rule per primitive for one transformation or backend, keyed by `Primitive`.

    `@table.register(prim, ...)` is the one registration decorator (autodiff's `defvjp` and
    batching's `defbatch` are this); a primitive may be given by its registry name. `default`
    gives the rule of a primitive with none registered (e.g. one batching rule for every
    elementwise primitive), or None.

    >>> t = RuleTable("example")
    >>> _ = t.register("neg")(abs)
    >>> t.get(get("neg")) is abs, "neg" in t, t.get("exp")
    (True, True, None)
    >>> RULE_TABLES.remove(t)
    """

    def __init__(self, what: str, default: Callable[[Primitive], Callable | None] | None = None):
        self.what = what
        self.default = default
        self._rules: dict[Primitive, Callable] = {}
        RULE_TABLES.append(self)

    def register(self, *prims: Primitive | str) -> Callable[[Callable], Callable]:
        def decorate(rule: Callable) -> Callable:
            for prim in prims:
                self._rules[_resolve(prim)] = rule
            return rule

        return decorate

    def get(self, prim: Primitive | str, missing: Callable | None = None) -> Callable | None:
        """The rule of `prim` (or of the primitive named `prim`), else `missing` (also for a
        primitive no longer registered)."""
        if isinstance(prim, str):
            prim = PRIMITIVES.get(prim)
        elif PRIMITIVES.get(prim.name) is not prim:
            prim = None
        if prim is None:
            return missing
        rule = self._rules.get(prim)
        if rule is None and self.default is not None:
            rule = self.default(prim)
        return missing if rule is None else rule

    def __contains__(self, prim: Primitive | str) -> bool:
        return self.get(prim) is not None

    def __getitem__(self, prim: Primitive | str) -> Callable:
        rule = self.get(prim)
        if rule is None:
            raise TracejitKeyError(prim)
        return rule

    def __setitem__(self, prim: Primitive | str, rule: Callable) -> None:
        self.register(prim)(rule)

    def __delitem__(self, prim: Primitive | str) -> None:
        del self._rules[_resolve(prim)]

    def discard(self, prim: Primitive) -> None:
        self._rules.pop(prim, None)

    def __repr__(self) -> str:
        return f"RuleTable({self.what}, {len(self._rules)} rules)"


RULE_TABLES: list[RuleTable] = []


def _resolve(prim: Primitive | str) -> Primitive:
    return get(prim) if isinstance(prim, str) else prim


def register(
    name: str,
    kind: str,
    rule,
    impl,
    multiple_results: bool = False,
    *,
    cost: int | None = None,
    fusion: str | None = None,
    rules: dict[RuleTable, Callable] | None = None,
    effectful: bool = False,
) -> Primitive:
    """Register a primitive; `rules` registers its rule in each of those tables too.

    `cost` defaults to 1 for an elementwise primitive (0 otherwise) and `fusion` to its kind's
    usual class (`INLINE` for elementwise, `HOST` for opaque primitives).
    """
    if name in PRIMITIVES:
        raise TracejitValueError(f"primitive {name!r} registered twice")
    if cost is None:
        cost = 1 if kind == ELEMENTWISE else 0
    if fusion is None:
        fusion = _DEFAULT_FUSION.get(kind, HOST)
    if fusion not in FUSION_CLASSES:
        raise TracejitValueError(
            f"{name}: unknown fusion class {fusion!r}, not one of {FUSION_CLASSES}"
        )
    prim = Primitive(name, kind, rule, impl, multiple_results, cost, fusion, effectful)
    PRIMITIVES[name] = prim
    for table, table_rule in (rules or {}).items():
        table.register(prim)(table_rule)
    return prim


def unregister(prim: Primitive) -> None:
    """Remove `prim` and its rule from every table (a test's stand-in primitive)."""
    if PRIMITIVES.get(prim.name) is prim:
        del PRIMITIVES[prim.name]
    for table in RULE_TABLES:
        table.discard(prim)


def get(name: str) -> Primitive:
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise UnsupportedError(f"no primitive named {name!r}") from None


# ---------------------------------------------------------------- elementwise rules


def same_shape(name: str, avals: list[AVal]) -> tuple[int, ...]:
    shape = avals[0][0]
    for a in avals[1:]:
        if a[0] != shape:
            shapes = ", ".join(str(tuple(x[0])) for x in avals)
            raise ShapeError(f"{name}: operand shapes differ: {shapes}")
    return shape


def _check_kind(name: str, dtype, kinds: str) -> None:
    if dtypes.category(dtype) not in kinds:
        allowed = {"f": "float", "i": "integer", "b": "bool", "c": "complex"}
        want = " or ".join(allowed[k] for k in kinds)
        raise UnsupportedError(f"{name} needs {want} operands, got {np.dtype(dtype)}")


@dataclass(frozen=True)
class ElementwiseRule:
    """The shape/dtype rule of an elementwise primitive: `arity` operands of one shape and one
    dtype of `kinds` ("f", "fi", ...), the result of that shape and of `out_dtype` (None: the
    operands' dtype). Its fields tell the tests which operands to draw for the primitive."""

    name: str
    kinds: str
    out_dtype: Any = None
    arity: int = 1

    def __call__(self, avals, **_):
        name = self.name
        if len(avals) != self.arity:
            raise TracejitTypeError(f"{name} takes {self.arity} operand(s), got {len(avals)}")
        shape = same_shape(name, avals)
        dt = avals[0][1]
        for a in avals[1:]:
            if a[1] != dt:
                raise TracejitTypeError(
                    f"{name}: operand dtypes differ: {[str(x[1]) for x in avals]}"
                )
        _check_kind(name, dt, self.kinds)
        weak = all(a[2] for a in avals)
        out = self.out_dtype
        return (shape, np.dtype(out) if out is not None else dt, weak and out is None)


def elementwise_rule(name: str, kinds: str, out_dtype=None, arity: int = 1) -> ElementwiseRule:
    """The rule of an elementwise primitive of `arity` operands of `kinds` (`ElementwiseRule`)."""
    return ElementwiseRule(name, kinds, out_dtype, arity)


FLOAT, NUM, INT_BOOL, ANY = "f", "fi", "ib", "fib"
COMPLEX = "c"  # + - * / negation and ==, != also take complex operands
