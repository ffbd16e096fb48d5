"""Canonicalization and no-op removal: rewrites that never change a result.

Floating point is respected: no rule reassociates (`(a+b)+c` stays), and `x*0` is not `0`
(NaN and Inf times zero are NaN). Every rule is bit-exact: `x + 0.0` is not `x` (for x = -0.0
the sum is +0.0, as NumPy gives), only `x + (-0.0)` and `x - 0.0` are.

`STOP_GRADIENT_RULES` remove `stop_gradient` (an identity for values); only a graph that will
not be differentiated again (the post-grad stage) may use them.
"""

from __future__ import annotations

import math

from tracejit.ir.graph import Graph
from tracejit.ir.passes.rewrite import P, Rule, rewrite

X = P.var("x")


def _x(b, m):
    return m["x"]


def _signed_zero(negative: bool):
    """`x` when the zero operand of m["op"] (x + z, x - z) has the sign that leaves every
    float x unchanged (x + -0.0 and x - 0.0 are x, -0.0 included; a complex zero in both
    parts: -0.0 - 0.0j + 0j is 0j); ints: any zero."""

    def fn(b, m):
        node = m["op"]
        z = node.inputs[1] if node.inputs[0] is m["x"] else node.inputs[0]
        if z.dtype.kind in "fc":
            value = b.splat_value(z)
            parts = (value.real, value.imag) if z.dtype.kind == "c" else (value,)
            want = -1.0 if negative else 1.0
            if any(math.copysign(1.0, part) != want for part in parts):
                return None
        return m["x"]

    return fn


def _real(node) -> bool:
    return node.outputs[0].dtype.kind != "c"


def _same_shape(node) -> bool:
    return node.outputs[0].shape == node.inputs[0].shape


def _identity_perm(node) -> bool:
    return tuple(node.attrs["perm"]) == tuple(range(len(node.attrs["perm"])))


def _full_slice(node) -> bool:
    shape = node.inputs[0].shape
    a = node.attrs
    return (
        all(s == 0 for s in a["starts"])
        and tuple(a["stops"]) == tuple(shape)
        and all(s == 1 for s in a["steps"])
    )


def _reshape_reshape(b, m):
    return b.emit("reshape", m["x"], shape=m["outer"].attrs["shape"])


def _transpose_transpose(b, m):
    inner, outer = m["inner"].attrs["perm"], m["outer"].attrs["perm"]
    perm = tuple(inner[j] for j in outer)
    if perm == tuple(range(len(perm))):
        return m["x"]
    return b.emit("transpose", m["x"], perm=perm)


def _broadcast_broadcast(b, m):
    inner, outer = m["inner"].attrs, m["outer"].attrs
    dims = tuple(outer["dims"][d] for d in inner["dims"])
    return b.emit("broadcast_in_dim", m["x"], shape=outer["shape"], dims=dims)


def _same_dtype(node) -> bool:
    return node.inputs[0].dtype == node.outputs[0].dtype


def _select_by_const(b, m):
    """select(c, x, y) with a constant condition c: the operand it picks."""
    cond = b.splat_value(m["cond"])
    if cond is None:
        return None
    return m["x"] if cond else m["y"]


def _contracts_one(node) -> bool:
    return node.inputs[0].shape[-1] == 1


def _outer_product(b, m):
    """a (..., m, 1) @ b (..., 1, n) is 0 + a * b broadcast to (..., m, n): each result is one
    product added to the GEMM's zero start, which makes a -0.0 product +0.0 as the GEMM does
    (per-example gradients make many of these)."""
    x, y = m["x"], m["y"]
    *batch, rows, _ = x.shape
    cols = y.shape[-1]
    nb = len(batch)
    shape = (*batch, rows, cols)
    left = b.emit("reshape", x, shape=(*batch, rows))
    right = b.emit("reshape", y, shape=(*batch, cols))
    left = b.emit("broadcast_in_dim", left, shape=shape, dims=(*range(nb), nb))
    right = b.emit("broadcast_in_dim", right, shape=shape, dims=(*range(nb), nb + 1))
    product = b.emit("mul", left, right)
    return b.emit("add", b.splat(0, product), product)


RULES: list[Rule] = [
    # layout no-ops and compositions
    Rule("reshape-noop", P("reshape", X, where=_same_shape), _x),
    Rule("reshape-reshape", P("reshape", P("reshape", X), name="outer"), _reshape_reshape),
    Rule("broadcast-noop", P("broadcast_in_dim", X, where=_same_shape), _x),
    Rule(
        "broadcast-broadcast",
        P("broadcast_in_dim", P("broadcast_in_dim", X, name="inner"), name="outer"),
        _broadcast_broadcast,
    ),
    Rule("transpose-noop", P("transpose", X, where=_identity_perm), _x),
    Rule(
        "transpose-transpose",
        P("transpose", P("transpose", X, name="inner"), name="outer"),
        _transpose_transpose,
    ),
    Rule("slice-noop", P("slice", X, where=_full_slice), _x),
    Rule("rev-noop", P("rev", X, where=lambda n: not n.attrs["axes"]), _x),
    Rule(
        "reduce-noop",
        P(
            ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"),
            X,
            where=lambda n: not n.attrs["axes"],
        ),
        _x,
    ),
    Rule("convert-noop", P("convert", X, where=_same_dtype), _x),
    # arithmetic identities, exact in IEEE arithmetic
    Rule("neg-neg", P("neg", P("neg", X)), _x),
    # (not for complex x: NumPy's complex product and quotient by 1 + 0j are not x: inf
    # parts give NaN, (1 + inf j) * 1 is nan + inf j, and signed zeros change)
    Rule("mul-one", P("mul", X, P.const(1), where=_real), _x),  # also 1*x: commutative
    Rule("add-zero", P("add", X, P.const(0), name="op"), _signed_zero(negative=True)),
    Rule("sub-zero", P("sub", X, P.const(0), name="op"), _signed_zero(negative=False)),
    Rule("div-one", P("div", X, P.const(1), where=_real), _x),
    Rule("pow-one", P("pow", X, P.const(1), where=_real), _x),  # pow(x, 1) is x (IEEE)
    Rule("select-const", P("select", P.var("cond"), P.var("x"), P.var("y")), _select_by_const),
    Rule("matmul-outer", P("matmul", X, P.var("y"), where=_contracts_one), _outer_product),
]

STOP_GRADIENT_RULES: list[Rule] = [Rule("stop-gradient", P("stop_gradient", X), _x)]


def simplify(graph: Graph, stats: dict | None = None) -> Graph:
    """Canonicalize `graph` and remove no-ops (gradient-preserving).

    >>> import numpy as np, tracejit as tj
    >>> g = tj.make_ir(lambda x: -(-x) * 1.0)(np.ones(2))
    >>> print(simplify(g))
    { lambda a:f64[2] . let
      in (a,) }
    """
    return rewrite(graph, RULES, stats)
