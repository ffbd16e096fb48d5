"""Drawers of the order operations: sort, argsort (stable), searchsorted, median, percentile,
quantile, and select. Bounds: _fuzz_order.py."""

from __future__ import annotations

from _fuzz_draw_elementwise import literal_for
from _fuzz_ops import COMPARE, Pool, Step, axes_of, normalized, partner
from hypothesis import strategies as st

QUANTILES = ("0.0", "0.25", "0.5", "0.9", "1.0", "[0.1, 0.5]", "[1.0, 0.0, 0.75]")
PERCENTILES = ("0.0", "25.0", "50", "90.0", "100", "[10.0, 50.0]", "[100.0, 0, 75.0]")
# NumPy's interpolating methods (linear twice as often); the order-statistic ones keep an
# integer operand's dtype, and their bound is the linear one's (a looser one: no lerp)
METHODS = ("linear", "linear", "lower", "higher", "nearest", "midpoint")


def _axis(draw, ndim: int):
    """An axis of an `ndim`-d value (maybe negative), or None (the flattened array)."""
    if ndim == 0 or draw(st.integers(0, 3)) == 0:
        return None
    return draw(st.integers(-ndim, ndim - 1))


def sort(draw, pool: Pool) -> Step | None:
    """np.sort or np.argsort(stable=True) along one axis or of the flattened array (complex
    values too)."""
    a = pool.pick(draw, kinds="bifc")
    if a is None:
        return None
    ndim = len(pool.shape(a))
    axis = _axis(draw, ndim)
    param = None if axis is None else axis % ndim
    if draw(st.booleans()):
        return Step(f"np.sort({{0}}, axis={axis})", (a,), "sort", (param,))
    return Step(f"np.argsort({{0}}, axis={axis}, stable=True)", (a,), "argsort", (param,))


def searchsorted(draw, pool: Pool) -> Step | None:
    """Where the elements of a value fall among the sorted elements of another."""
    a = pool.pick(draw)
    if a is None:
        return None
    v = draw(st.one_of(st.none(), st.sampled_from(range(len(pool.avals)))))
    if v is None or (pool.dtype(v).kind == "b") != (pool.dtype(a).kind == "b"):
        v = partner(draw, pool, a, "if" if pool.dtype(a).kind != "b" else "b")
    side = draw(st.sampled_from(["left", "right"]))
    text = f"np.searchsorted(np.sort(np.ravel({{0}})), {{1}}, side={side!r})"
    return Step(text, (a, v), "searchsorted")


def quantile(draw, pool: Pool) -> Step | None:
    """median, percentile or quantile (any method of METHODS) over some axes, maybe keepdims."""
    a = pool.pick(draw, kinds="if")
    if a is None:
        return None
    ndim = len(pool.shape(a))
    axis = axes_of(draw, ndim)
    keepdims = draw(st.booleans())
    name = draw(st.sampled_from(["median", "percentile", "quantile"]))
    q = draw(st.sampled_from(PERCENTILES if name == "percentile" else QUANTILES))
    method = "linear" if name == "median" else draw(st.sampled_from(METHODS))
    q_arg = "" if name == "median" else f", {q}"
    m_arg = "" if method == "linear" else f", method={method!r}"
    text = f"np.{name}({{0}}{q_arg}, axis={axis!r}, keepdims={keepdims}{m_arg})"
    oracle = None
    if pool.dtype(a).kind != "f" and method in ("linear", "midpoint") and name != "median":
        # NumPy's lerp takes b - a in the integer dtype, which wraps (quantile of int8
        # [5, -128] at 0.9 gave 41.9 for -34.9): the oracle interpolates converted values
        oracle = text.replace("({0}", "(np.asarray({0}, np.float64)")
    return Step(text, (a,), "quantile", (normalized(axis, ndim), keepdims), oracle)


def select(draw, pool: Pool) -> Step | None:
    """np.select([x OP c1, x OP c2], [y, z], default) over broadcast partners."""
    a = pool.pick(draw, kinds="if")
    if a is None:
        return None
    kind = pool.dtype(a).kind
    ops = [draw(st.sampled_from(COMPARE)) for _ in range(2)]
    lits = [literal_for(draw, kind) for _ in range(2)]
    y = partner(draw, pool, a, "bif")
    z = partner(draw, pool, a, "bif")
    default = draw(st.sampled_from(["0", "1", "(-1)"]))
    conds = f"[{{0}} {ops[0]} {lits[0]}, {{0}} {ops[1]} {lits[1]}]"
    text = f"np.select({conds}, [{{1}}, {{2}}], {default})"
    return Step(text, (a, y, z), "select", (*ops, *lits, default))
