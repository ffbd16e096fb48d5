"""The primitive registry: name, kind, shape/dtype rule and NumPy reference implementation.

The set stays small, like jax.lax: `tracejit.numpy` builds every NumPy function from these.
Transformations keep their own rule tables (autodiff.VJP_RULES, ...) keyed by primitive
name; primitives know nothing about them.

Abstract values are `(shape, dtype, weak)` triples. Elementwise primitives take operands of
one shape and one dtype: broadcasting and promotion happen in `tracejit.numpy`, so every
later stage (autodiff, fusion, codegen) sees explicit `broadcast_in_dim` and `convert` nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tracejit.errors import ShapeError, UnsupportedError
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


@dataclass(frozen=True, eq=False)
class Primitive:
    name: str
    kind: str
    rule: Callable[..., list[AVal]]  # (in_avals, **attrs) -> out avals
    impl: Callable[..., Any]  # (*np arrays, **attrs) -> array or tuple of arrays
    multiple_results: bool = False

    def abstract_eval(self, in_avals: list[AVal], attrs: dict) -> list[AVal]:
        out = self.rule(list(in_avals), **attrs)
        return list(out) if self.multiple_results else [out]

    def __repr__(self) -> str:
        return f"Primitive({self.name})"


PRIMITIVES: dict[str, Primitive] = {}


def register(name: str, kind: str, rule, impl, multiple_results: bool = False) -> Primitive:
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} registered twice")
    prim = Primitive(name, kind, rule, impl, multiple_results)
    PRIMITIVES[name] = prim
    return prim


def get(name: str) -> Primitive:
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise UnsupportedError(f"no primitive named {name!r}") from None


# ---------------------------------------------------------------- elementwise rules


def _same_shape(name: str, avals: list[AVal]) -> tuple[int, ...]:
    shape = avals[0][0]
    for a in avals[1:]:
        if a[0] != shape:
            shapes = ", ".join(str(tuple(x[0])) for x in avals)
            raise ShapeError(f"{name}: operand shapes differ: {shapes}")
    return shape


def _check_kind(name: str, dtype, kinds: str) -> None:
    if np.dtype(dtype).kind not in kinds:
        allowed = {"f": "float", "i": "integer", "b": "bool"}
        want = " or ".join(allowed[k] for k in kinds)
        raise UnsupportedError(f"{name} needs {want} operands, got {np.dtype(dtype)}")


def _elementwise_rule(name: str, kinds: str, out_dtype=None):
    def rule(avals, **_):
        shape = _same_shape(name, avals)
        dt = avals[0][1]
        for a in avals[1:]:
            if a[1] != dt:
                raise TypeError(f"{name}: operand dtypes differ: {[str(x[1]) for x in avals]}")
        _check_kind(name, dt, kinds)
        weak = all(a[2] for a in avals)
        return (
            shape,
            np.dtype(out_dtype) if out_dtype is not None else dt,
            weak and out_dtype is None,
        )

    return rule


FLOAT, NUM, INT_BOOL, ANY = "f", "fi", "ib", "fib"

_erf_scalar = np.frompyfunc(__import__("math").erf, 1, 1)


def _erf(x):
    return np.asarray(_erf_scalar(x)).astype(x.dtype)  # 0-d input gives a Python float


def _int_pow(x, y):
    # NumPy raises for negative integer exponents; a compiled kernel cannot, so 0 (1 for base 1).
    y = np.asarray(y)
    safe = np.where(y < 0, 0, y)
    out = np.power(x, safe)
    return np.where(
        y < 0, np.where(np.abs(x) == 1, np.where(x == 1, 1, np.where(y % 2 == 0, 1, -1)), 0), out
    ).astype(x.dtype)


def _pow(x, y):
    if x.dtype.kind == "f":
        return np.power(x, y)
    return _int_pow(x, y)


UNARY = {
    # name: (kinds, numpy impl, output dtype or None for "same as input")
    "neg": (NUM, np.negative, None),
    "abs": (NUM, np.abs, None),
    "sign": (NUM, np.sign, None),
    "exp": (FLOAT, np.exp, None),
    "exp2": (FLOAT, np.exp2, None),
    "log": (FLOAT, np.log, None),
    "log2": (FLOAT, np.log2, None),
    "log10": (FLOAT, np.log10, None),
    "log1p": (FLOAT, np.log1p, None),
    "expm1": (FLOAT, np.expm1, None),
    "sqrt": (FLOAT, np.sqrt, None),
    "sin": (FLOAT, np.sin, None),
    "cos": (FLOAT, np.cos, None),
    "tan": (FLOAT, np.tan, None),
    "asin": (FLOAT, np.arcsin, None),
    "acos": (FLOAT, np.arccos, None),
    "atan": (FLOAT, np.arctan, None),
    "sinh": (FLOAT, np.sinh, None),
    "cosh": (FLOAT, np.cosh, None),
    "tanh": (FLOAT, np.tanh, None),
    "asinh": (FLOAT, np.arcsinh, None),
    "acosh": (FLOAT, np.arccosh, None),
    "atanh": (FLOAT, np.arctanh, None),
    "erf": (FLOAT, _erf, None),
    "floor": (FLOAT, np.floor, None),
    "ceil": (FLOAT, np.ceil, None),
    "round": (FLOAT, np.round, None),  # half to even, as NumPy
    "trunc": (FLOAT, np.trunc, None),
    "not": (INT_BOOL, np.invert, None),  # logical not on bool, bitwise not on ints
    "isnan": (ANY, np.isnan, np.bool_),
    "isinf": (ANY, np.isinf, np.bool_),
    "isfinite": (ANY, np.isfinite, np.bool_),
    "stop_gradient": (ANY, lambda x: x, None),  # identity whose cotangent is zero
}

BINARY = {
    "add": (ANY, np.add, None),  # on bool: logical or, as NumPy
    "sub": (NUM, np.subtract, None),
    "mul": (ANY, np.multiply, None),
    "div": (FLOAT, np.true_divide, None),
    "floordiv": (NUM, np.floor_divide, None),
    "mod": (NUM, np.remainder, None),
    "pow": (NUM, _pow, None),
    "max": (ANY, np.maximum, None),
    "min": (ANY, np.minimum, None),
    "atan2": (FLOAT, np.arctan2, None),
    "and": (INT_BOOL, np.bitwise_and, None),
    "or": (INT_BOOL, np.bitwise_or, None),
    "xor": (INT_BOOL, np.bitwise_xor, None),
    "shl": ("i", np.left_shift, None),
    "shr": ("i", np.right_shift, None),
    "eq": (ANY, np.equal, np.bool_),
    "ne": (ANY, np.not_equal, np.bool_),
    "lt": (ANY, np.less, np.bool_),
    "le": (ANY, np.less_equal, np.bool_),
    "gt": (ANY, np.greater, np.bool_),
    "ge": (ANY, np.greater_equal, np.bool_),
}

for _name, (_kinds, _impl, _out) in {**UNARY, **BINARY}.items():
    register(_name, ELEMENTWISE, _elementwise_rule(_name, _kinds, _out), _impl)


def _select_rule(avals):
    cond, x, y = avals
    shape = _same_shape("select", avals)
    if cond[1] != np.bool_:
        raise TypeError(f"select: condition must be bool, got {cond[1]}")
    if x[1] != y[1]:
        raise TypeError(f"select: branch dtypes differ: {x[1]} and {y[1]}")
    return (shape, x[1], x[2] and y[2])


register("select", ELEMENTWISE, _select_rule, lambda c, x, y: np.where(c, x, y))


def _convert_rule(avals, dtype, weak=False):
    ((shape, _, _),) = avals
    return (shape, dtypes.canonical(dtype), weak)


def _convert_impl(x, dtype, weak=False):
    return x.astype(dtype)


register("convert", ELEMENTWISE, _convert_rule, _convert_impl)
