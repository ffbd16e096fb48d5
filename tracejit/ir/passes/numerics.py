"""Numerics rewrites: replace formulas that overflow or cancel by their stable forms.

- `log(exp(x) / sum(exp(x), axes, keepdims))` (the naive log-softmax users write) becomes
  `(x - m) - log(sum(exp(x - m)))` with `m = stop_gradient(max(x, axes))`, so logits like
  +-1000 give finite log-probabilities instead of `log(inf / inf)`.
- `log(sum(exp(x), axes))` becomes `log(sum(exp(x - m))) + m` (logsumexp).
- `log(1 + x)` becomes `log1p(x)`; `exp(x) - 1` becomes `expm1(x)`.

`m` is replaced by 0 where it is not finite (a row of -inf, as JAX's logsumexp does), and it
goes through `stop_gradient`: the shift cancels mathematically, so its gradient is zero, and
cutting it keeps the backward pass as cheap as the naive one's. The replacements are written
in primitives, so they are differentiable and the rewrite is valid before autodiff.

The patterns match what `tracejit.numpy` emits: `sum(..., keepdims=True)` is `reduce_sum`
then `reshape`; dividing by it broadcasts with `broadcast_in_dim`; a Python scalar is a
`const` broadcast to the operand's shape.
"""

from __future__ import annotations

from tracejit.ir.graph import Graph, Value
from tracejit.ir.passes.rewrite import Builder, P, Rule, rewrite

X = P.var("x")
FLOAT_X = P.var("x", where=lambda v: v.dtype.kind == "f")


def _kept(ndim: int, axes) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _shifted(b: Builder, x: Value, axes) -> tuple[Value, Value]:
    """(m, x - m): the finite, gradient-stopped max of `x` over `axes`, and the shifted `x`."""
    m = b.emit("stop_gradient", b.emit("reduce_max", x, axes=axes))
    m = b.emit("select", b.emit("isfinite", m), m, b.splat(0, like=m))
    mb = b.emit("broadcast_in_dim", m, shape=x.shape, dims=_kept(x.ndim, axes))
    return m, b.emit("sub", x, mb)


def _log_sum_exp_shifted(b: Builder, shifted: Value, axes) -> Value:
    return b.emit("log", b.emit("reduce_sum", b.emit("exp", shifted), axes=axes))


def _reduced_nonempty(x: Value, axes) -> bool:
    return all(x.shape[a] > 0 for a in axes)


_SHIFT_WRAPPERS = ("broadcast_in_dim", "reshape", "stop_gradient")


def _already_shifted(b: Builder, x: Value) -> bool:
    """Whether `x` is `y - max(y)` (broadcast): the stable form, ours or the user's.

    Without this check a rule would match its own replacement, which again contains
    `log(sum(exp(shifted)))`, forever.
    """
    node = b.node_of(x)
    if node is None or node.prim.name != "sub":
        return False
    y, node = node.inputs[0], b.node_of(node.inputs[1])
    while node is not None and node.prim.name in (*_SHIFT_WRAPPERS, "select"):
        node = b.node_of(node.inputs[1 if node.prim.name == "select" else 0])
    return node is not None and node.prim.name == "reduce_max" and node.inputs[0] is y


# ---------------------------------------------------------------- log-softmax


def _summed_back(b: Builder, den: Value, x: Value) -> tuple[int, ...] | None:
    """The axes when `den` is `sum(exp(x), axes)` laid back onto x's shape, else None.

    tnp gives `broadcast_in_dim(reshape(reduce_sum(e)))` for `sum(e, keepdims=True)`, and
    drops either step when it would not change the shape (a size-1 axis, a 1-element row);
    `broadcast_in_dim(reduce_sum(e), dims=kept axes)` is the same value without keepdims.
    """
    node = b.node_of(den)
    bc = rs = None
    if node is not None and node.prim.name == "broadcast_in_dim":
        bc, node = node, b.node_of(node.inputs[0])
    if node is not None and node.prim.name == "reshape":
        rs, node = node, b.node_of(node.inputs[0])
    if node is None or node.prim.name != "reduce_sum" or not node.attrs["axes"]:
        return None
    e = b.node_of(node.inputs[0])
    if e is None or e.prim.name != "exp" or e.inputs[0] is not x:
        return None
    axes = node.attrs["axes"]
    if rs is not None:
        keep = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        if rs.attrs["shape"] != keep:
            return None
        dims = tuple(range(x.ndim))
    else:
        dims = _kept(x.ndim, axes)
    if bc is None:
        return axes if rs is not None and den.shape == x.shape else None
    if bc.attrs["shape"] != x.shape or bc.attrs["dims"] != dims:
        return None
    return axes


def _log_softmax(b: Builder, m: dict) -> Value | None:
    x = m["x"]
    axes = _summed_back(b, m["den"], x)
    if axes is None or x.size == 0:
        return None
    # a softmax the user already shifted still underflows (exp(-200) / s is 0 in float32,
    # its log -inf); it needs no second shift
    shifted = x if _already_shifted(b, x) else _shifted(b, x, axes)[1]
    lse = _log_sum_exp_shifted(b, shifted, axes)
    lse = b.emit("broadcast_in_dim", lse, shape=x.shape, dims=_kept(x.ndim, axes))
    return b.emit("sub", shifted, lse)


# ---------------------------------------------------------------- logsumexp


def _logsumexp(b: Builder, m: dict) -> Value | None:
    x, axes = m["x"], m["sum"].attrs["axes"]
    if not _reduced_nonempty(x, axes) or _already_shifted(b, x):
        return None
    mx, shifted = _shifted(b, x, axes)
    out = b.emit("add", _log_sum_exp_shifted(b, shifted, axes), mx)
    if "rs" in m:
        out = b.emit("reshape", out, shape=m["rs"].attrs["shape"])
    return out


_SUM_EXP = P("reduce_sum", P("exp", FLOAT_X), name="sum")

RULES: list[Rule] = [
    Rule("log-softmax", P("log", P("div", P("exp", FLOAT_X), P.var("den"))), _log_softmax),
    Rule("logsumexp", P("log", _SUM_EXP), _logsumexp),
    Rule("logsumexp-keepdims", P("log", P("reshape", _SUM_EXP, name="rs")), _logsumexp),
    Rule("log1p", P("log", P("add", FLOAT_X, P.const(1))), lambda b, m: b.emit("log1p", m["x"])),
    Rule("expm1", P("sub", P("exp", FLOAT_X), P.const(1)), lambda b, m: b.emit("expm1", m["x"])),
]


def numerics(graph: Graph, stats: dict | None = None) -> Graph:
    """Rewrite unstable formulas in `graph` into their stable forms.

    >>> import numpy as np, tracejit as tj
    >>> print(numerics(tj.make_ir(lambda x: np.log(1.0 + x))(np.ones(2))))
    { lambda a:f64[2] . let
        b:f64[2] = log1p a
      in (b,) }
    """
    return rewrite(graph, RULES, stats)
