"""Comparisons (bool results), bitwise and logical and/or/xor, and shifts: no derivative."""

from __future__ import annotations

import numpy as np

from tracejit.ir.autodiff import zero_vjp
from tracejit.ir.c_types import UNSIGNED, c_type
from tracejit.ir.elementwise_ops.entry import elementwise_op
from tracejit.ir.primitives import ANY, COMPLEX, INT_BOOL


def _compare(name: str, kinds: str, impl, op: str, numpy: str) -> None:
    def c(args, dt, out_dt, attrs, uses, d):
        return f"(({args[0]}) {op} ({args[1]}))"

    tnp = {"plain": (numpy,)}
    elementwise_op(name, kinds, impl, vjp=zero_vjp, c=c, arity=2, out_dtype=np.bool_, tnp=tnp)


_compare("eq", ANY + COMPLEX, np.equal, "==", "equal")
_compare("ne", ANY + COMPLEX, np.not_equal, "!=", "not_equal")
_compare("lt", ANY, np.less, "<", "less")
_compare("le", ANY, np.less_equal, "<=", "less_equal")
_compare("gt", ANY, np.greater, ">", "greater")
_compare("ge", ANY, np.greater_equal, ">=", "greater_equal")


def _bitwise(name: str, impl, op: str) -> None:
    """Bitwise on integers, logical on bools (tnp: bitwise_<name> and logical_<name>)."""

    def c(args, dt, out_dt, attrs, uses, d):
        return f"(({c_type(dt)})(({args[0]}) {op} ({args[1]})))"

    tnp = {"bitwise": (f"bitwise_{name}",), "logical": (f"logical_{name}",)}
    elementwise_op(name, INT_BOOL, impl, vjp=zero_vjp, c=c, arity=2, tnp=tnp)


_bitwise("and", np.bitwise_and, "&")
_bitwise("or", np.bitwise_or, "|")
_bitwise("xor", np.bitwise_xor, "^")


def _shift(name: str, impl, numpy: tuple[str, ...]) -> None:
    """A shift by >= the bit width gives 0 (-1 shifting a negative integer right)."""

    def c(args, dt, out_dt, attrs, uses, d):
        return f"tj_{name}<{c_type(dt)}, {UNSIGNED[dt]}>({args[0]}, {args[1]})"

    tnp = {"bitwise": numpy}
    elementwise_op(name, "i", impl, vjp=zero_vjp, c=c, arity=2, tnp=tnp)


_shift("shl", np.left_shift, ("bitwise_left_shift", "left_shift"))
_shift("shr", np.right_shift, ("bitwise_right_shift", "right_shift"))
