"""The op lists of the property tests, read from the primitive registry (never hand-written):
a primitive registered with an `ElementwiseRule` is drawn by every elementwise test at once."""

from __future__ import annotations

from tracejit.ir.autodiff import VJP_RULES, zero_vjp
from tracejit.ir.primitives import PRIMITIVES, ElementwiseRule


def elementwise_names(arity: int, kind: str | None = None) -> list[str]:
    """Registered elementwise primitives of `arity` operands (taking dtype kind `kind`: "f",
    "i" or "b"), other tests' `test_*` stand-ins left out."""
    return sorted(
        name
        for name, prim in PRIMITIVES.items()
        if isinstance(prim.rule, ElementwiseRule)
        and prim.rule.arity == arity
        and (kind is None or kind in prim.rule.kinds)
        and not name.startswith("test_")
    )


def kinds_of(name: str) -> str:
    """The dtype kinds primitive `name`'s operands may have ("f", "fi", "fib", ...)."""
    return PRIMITIVES[name].rule.kinds


def differentiable_names(arity: int) -> list[str]:
    """Float elementwise primitives of `arity` operands whose VJP is not identically zero."""
    return [n for n in elementwise_names(arity, "f") if VJP_RULES[n] is not zero_vjp]


def zero_gradient_names(arity: int) -> list[str]:
    """Float elementwise primitives of `arity` operands whose VJP is zero (piecewise constant)."""
    return [n for n in elementwise_names(arity, "f") if VJP_RULES[n] is zero_vjp]
