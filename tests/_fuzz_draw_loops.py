"""Drawers of lax control flow: fori_loop, while_loop, scan (forward and reverse; the final
carry or the stacked carries), cond and switch, each over a body of one elementwise step drawn by
the elementwise drawers on the carry and a closed-over value (scan: the current slice of
xs). The body keeps the carry's shape and dtype (lax's rule); the NumPy side runs the same
text with _fuzz_lax.NumpyLax, and the bound is the body's, once per iteration."""

from __future__ import annotations

import _fuzz_draw_elementwise as ew
from _fuzz_ops import Pool, Step, broadcast_partner_shape, partner
from hypothesis import strategies as st

BODIES = [ew.unary, ew.binary, ew.binary, ew.where, ew.clip]
KINDS = ("fori", "while", "scan", "cond", "switch")


def _body(draw, sub: Pool, carry_aval, bodies):
    """An elementwise step over sub-pool values 0 (carry) and 1 that keeps the carry's
    shape and dtype, or None after three tries."""
    from _fuzz_programs import _stand_in

    for _ in range(3):
        step = draw(st.sampled_from(bodies))(draw, sub)
        out = None if step is None else _stand_in(step, sub)
        if out is not None and (out.shape, out.dtype) == carry_aval:
            return step
    return None


def loop(draw, pool: Pool, bodies=tuple(BODIES)) -> Step | None:
    c = pool.pick(draw)
    if c is None:
        return None
    kind = draw(st.sampled_from(KINDS))
    carry_aval = (pool.shape(c), pool.dtype(c))
    sub = Pool(only_dtype=pool.only_dtype)
    sub.avals.append(carry_aval)
    if kind == "scan":
        steps = draw(st.integers(1, 4))
        dtype = draw(st.sampled_from([carry_aval[1], carry_aval[1], "float32", "int32"]))
        b = pool.add_input((steps, *broadcast_partner_shape(draw, carry_aval[0])), dtype)
        sub.avals.append((pool.shape(b)[1:], pool.dtype(b)))
    else:
        b = partner(draw, pool, c, "bif")
        sub.avals.append(pool.avals[b])
    body = _body(draw, sub, carry_aval, bodies)
    if body is None:
        return None
    extra = tuple(pool.add_input(*sub.avals[j]) for j in range(2, len(sub.avals)))
    names = {0: "c", 1: "x" if kind == "scan" else "{1}"}
    if kind == "while":
        names[0] = "s[1]"
    text = body.text.format(
        *[names.get(a, f"{{{a}}}") if isinstance(a, int) else a for a in body.args]
    )
    count = draw(st.integers(0, 4))
    args = (c, b, *extra)
    if kind == "fori":
        return Step(f"F.lax.fori_loop(0, {count}, lambda i, c: {text}, {{0}})", args, "loop",
                    (kind, body, count, ()))  # fmt: skip
    if kind == "while":
        loop_text = f"F.lax.while_loop(lambda s: s[0] < {count}, lambda s: (s[0] + 1, {text}), "
        return Step(loop_text + "(0, {0}))[1]", args, "loop", (kind, body, count, ()))
    if kind == "cond":
        p = pool.index_input((), "int32", -1, 1)
        cond = f"F.lax.cond({{{len(args)}}} > 0, lambda c: {text}, lambda c: c, {{0}})"
        return Step(cond, (*args, p), "loop", (kind, body, 1, ()))
    if kind == "switch":  # the index is clamped into the branches, as lax does
        p = pool.index_input((), "int32", -2, 3)
        branches = f"[lambda c: c, lambda c: {text}, lambda c: c]"
        switch = f"F.lax.switch({{{len(args)}}}, {branches}, {{0}})"
        return Step(switch, (*args, p), "loop", (kind, body, 1, ()))
    reverse, which = draw(st.booleans()), draw(st.integers(0, 1))
    scan = f"F.lax.scan(lambda c, x: (lambda n: (n, n))({text}), {{0}}, {{1}}, reverse={reverse})"
    return Step(f"{scan}[{which}]", args, "loop", (kind, body, count, (reverse, which)))


def associative_scan(draw, pool: Pool) -> Step | None:
    """lax.associative_scan of add, maximum or minimum along an axis, maybe reversed: the
    dtype is kept (NumPy's add.accumulate would widen int8 to int64: the oracle passes it)."""
    a = pool.pick(draw, min_ndim=1)
    if a is None:
        return None
    ndim = len(pool.shape(a))
    op = draw(st.sampled_from(["add", "maximum", "minimum"]))
    axis, reverse = draw(st.integers(-ndim, ndim - 1)), draw(st.booleans())
    text = f"F.lax.associative_scan(np.{op}, {{0}}, reverse={reverse}, axis={axis})"
    return Step(text, (a,), "assoc", (op, axis % ndim, reverse))
