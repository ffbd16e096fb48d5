"""Drawers of elementwise steps: unary, binary (with broadcasting and weak literals), where,
clip and conversions. Each returns a `Step` or None when the pool has no fitting operand."""

from __future__ import annotations

from _fuzz_ops import (
    ARITH,
    BITWISE,
    COMPARE,
    FLOAT_UNARY,
    FUNC_BINARY,
    INT_BOOL_UNARY,
    LITERALS,
    NUM_UNARY,
    UNARY_RULE,
    Pool,
    Step,
    fmt,
    partner,
)
from hypothesis import strategies as st

CONVERT_TO = ("np.bool_", "np.int32", "np.int64", "np.float32", "np.float64", "np.int8", "np.uint8")
CONVERT_TO += ("np.int16", "np.uint16", "np.uint32", "np.uint64", "np.float16")


def unary(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw)
    if a is None:
        return None
    kind = pool.dtype(a).kind
    names = ["negative", "absolute", "sign"] if kind != "b" else []
    names += [*FLOAT_UNARY, "erf"] if kind == "f" else INT_BOOL_UNARY
    if draw(st.integers(0, 7)) == 0:
        names = list(NUM_UNARY)
    name = draw(st.sampled_from(names))
    if name == "erf":  # NumPy has no erf: F.erf is math.erf on the NumPy side
        return Step("F.erf({0})", (a,), "libm:erf")
    if name == "logical_not" or (name == "invert" and kind not in "iub"):
        name = "invert"
    rule = UNARY_RULE.get(name, "libm:" + name)
    return Step(f"np.{name}({{0}})", (a,), rule)


def literal_for(draw, kind: str) -> str:
    """The text of a weak Python scalar for an operand of `kind` (floats only meet floats)."""
    lit = draw(st.sampled_from(LITERALS))
    if kind != "f" and isinstance(lit, float):
        lit = draw(st.sampled_from((0, 1, 2, 3, -1, 7)))
    return fmt(lit)


def binary(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw)
    if a is None:
        return None
    kind = pool.dtype(a).kind
    family = draw(st.sampled_from(["arith", "arith", "func", "compare", "bitwise"]))
    if family == "bitwise" and kind == "f":
        family = "compare"
    if draw(st.integers(0, 3)) == 0:  # a weak Python scalar on either side
        lit = literal_for(draw, kind)
        args: tuple = draw(st.sampled_from([(a, lit), (lit, a)]))
    else:
        b_kinds = "ib" if family == "bitwise" else "bif"
        args = (a, partner(draw, pool, a, b_kinds))
    text = "{0} OP {1}"
    return _binary_step(draw, family, text, args, kind)


def _binary_step(draw, family: str, text: str, args, kind: str) -> Step:
    if family == "arith":
        op = draw(st.sampled_from(sorted(ARITH) + ["**"]))
        if op == "**" and kind == "b":
            # NumPy's ndarray.__pow__ turns `bool_array ** 2` into np.square, which is int8,
            # where np.power (and tracejit's **) gives int64: a quirk of the operator, not of
            # the power; the function form keeps bool bases
            return Step("np.power({0}, {1} & 7)", args, "pow")
        if op == "**":  # NumPy raises for negative integer exponents: keep them in 0..7
            return (
                Step("({0} ** ({1} & 7))", args, "pow")
                if kind != "f"
                else Step("({0} ** {1})", args, "pow")
            )
        return Step("(" + text.replace("OP", op) + ")", args, ARITH[op])
    if family == "compare":
        return Step("(" + text.replace("OP", draw(st.sampled_from(COMPARE))) + ")", args, "compare")
    if family == "bitwise":
        ops = BITWISE + (("<<", ">>") if kind in "iu" else ())
        return Step("(" + text.replace("OP", draw(st.sampled_from(ops))) + ")", args, "exact")
    name = draw(st.sampled_from(sorted(FUNC_BINARY)))
    if name == "power" and kind != "f":
        name = "maximum"  # NumPy raises for an integer to a negative integer power
    call = f"np.{name}(" + text.replace(" OP ", ", ") + ")"
    return Step(call, args, FUNC_BINARY[name])


def where(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw)
    if a is None:
        return None
    b = partner(draw, pool, a, "bif")
    if pool.dtype(a).kind == "b" and draw(st.booleans()):
        return Step("np.where({0}, {1}, {2})", (a, b, a), "where")
    op = draw(st.sampled_from(COMPARE))
    lit = literal_for(draw, pool.dtype(a).kind)
    if draw(st.booleans()):
        return Step(f"np.where({{0}} {op} {{1}}, {{0}}, {{2}})", (a, lit, b), "where_cmp", (op,))
    return Step(f"np.where({{0}} {op} {{1}}, {{1}}, {{0}})", (a, b), "where_cmp2", (op,))


def clip(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="if")
    if a is None:
        return None
    lo = draw(st.sampled_from([-1, 0, -0.5, 0.0]))
    hi = draw(st.sampled_from([1, 2, 0.5, 3.0]))
    return Step(f"np.clip({{0}}, {lo!r}, {hi!r})", (a,), "clip", (lo, hi))


def convert(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw)
    if a is None:
        return None
    target = draw(st.sampled_from(CONVERT_TO))
    return Step(f"{{0}}.astype({target})", (a,), "convert")


def nn_unary(draw, pool: Pool) -> Step | None:
    """tj.nn elementwise functions; NumPy oracles in _fuzz_eval.NumpyNN (relu: a plain where)."""
    a = pool.pick(draw, kinds="f")
    if a is None:
        return None
    name = draw(st.sampled_from(["relu", "softplus", "sigmoid", "log_sigmoid"]))
    if name == "relu":
        return Step("F.nn.relu({0})", (a,), "exact", (), "np.where({0} > 0, {0}, 0)")
    return Step(f"F.nn.{name}({{0}})", (a,), "nn:" + name)
