"""One declaration per elementwise primitive: `elementwise_op(...)` registers the primitive
with its VJP and C rendering, and records the NumPy names `tracejit.numpy` wraps it under.

>>> from tracejit.ir.primitives import PRIMITIVES
>>> TNP_NAMES["tanh"], PRIMITIVES["tanh"].cost >= TRANSCENDENTAL
({'float': ('tanh',)}, True)
"""

from __future__ import annotations

from collections.abc import Callable

from tracejit.ir.autodiff import VJP_RULES
from tracejit.ir.c_render import C_RULES, LIBM_UNARY, libm_call
from tracejit.ir.primitives import (
    ELEMENTWISE,
    FLOAT,
    TRANSCENDENTAL,
    Primitive,
    elementwise_rule,
    register,
)

# primitive name -> {tnp wrapper style: NumPy names}: tracejit/numpy/_elementwise.py builds one
# function per style (e.g. "float": ints and bools become floats first, as NumPy's ufuncs do)
TNP_NAMES: dict[str, dict[str, tuple[str, ...]]] = {}


def elementwise_op(
    name: str,
    kinds: str,
    impl: Callable,
    *,
    vjp: Callable,
    c: Callable,
    arity: int = 1,
    out_dtype=None,
    cost: int = 1,
    tnp: dict[str, tuple[str, ...]] | None = None,
) -> Primitive:
    """Register elementwise primitive `name`: `arity` operands of one dtype of `kinds`, its
    result of `out_dtype` (None: the operands'); `impl` its NumPy reference, `vjp` its VJP
    rule (ir/autodiff.py), `c` its C rendering (ir/c_render.py); `tnp` the NumPy names
    tracejit.numpy defines from it, by wrapper style."""
    rule = elementwise_rule(name, kinds, out_dtype, arity)
    rules = {VJP_RULES: vjp, C_RULES: c}
    prim = register(name, ELEMENTWISE, rule, impl, cost=cost, rules=rules)
    if tnp:
        TNP_NAMES[name] = dict(tnp)
    return prim


def libm_unary(
    name: str, impl: Callable, vjp: Callable, numpy: tuple[str, ...] = (), style="float"
):
    """A float function computed by the libm function of the same name (`tanhf`, `tanh`),
    tnp's under `numpy` (default: `(name,)`) of wrapper `style`."""
    LIBM_UNARY[name] = name  # declared `omp declare simd` (backend_cpu/vector_math.py)
    c = libm_call(name)
    tnp = {style: numpy or (name,)}
    return elementwise_op(name, FLOAT, impl, vjp=vjp, c=c, cost=TRANSCENDENTAL, tnp=tnp)


# VJP helpers (primitives only, so a VJP is itself differentiable)


def square(e, x):
    return e.mul(x, x)


def scale(e, x, c: float):
    return e.mul(x, e.full(c, x))


def one_minus_sq(e, x):
    return e.sub(e.full(1.0, x), square(e, x))
