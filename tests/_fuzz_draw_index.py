"""Drawers of indexing by traced integers: gather (x[idx], x[:, idx], take, take_along_axis),
scatter (x.at[idx].set/add(v) with distinct idx), lax.dynamic_slice and
lax.dynamic_update_slice with traced starts.

The indices are program inputs (`Pool.index_input`), drawn in range three times in four:
NumPy raises for an index out of range, where compiled code clamps (JAX's rule: a negative
index counts from the end, then the result is clipped to [0, n - 1]), so a gather whose
indices may fall outside has NumPy's own with clamped indices as its oracle (`F.clamped`). dynamic_slice's starts are drawn past both ends: lax clamps them so the slice
fits, and the NumPy side (_fuzz_lax.NumpyLax) clamps the same way. Bounds: rule "gather"
moves each data operand's bound with its value (_fuzz_eval._gather), "scatter" adds v.
"""

from __future__ import annotations

from _fuzz_ops import Pool, Step
from hypothesis import strategies as st

INDEX_DTYPES = ("int32", "int64")
SMALL_SHAPES = st.sampled_from([(), (1,), (3,), (2, 2), (4,), (2, 1, 3)])


def gather(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="bifc", min_ndim=1)
    if a is None:
        return None
    shape = pool.shape(a)
    ndim = len(shape)
    axis = draw(st.integers(0, ndim - 1))
    n = shape[axis]
    if n == 0:
        return None
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    how = draw(st.sampled_from(["getitem", "take", "along"]))
    low, high = (-n, n - 1) if draw(st.integers(0, 3)) else (-2 * n - 2, 2 * n + 1)
    oracle = None if low == -n else f"F.clamped({{1}}, {n})"
    if how == "along":
        idx_shape = tuple(
            draw(st.integers(0, 3)) if i == axis else draw(st.sampled_from([d, 1]))
            for i, d in enumerate(shape)
        )
        idx = pool.index_input(idx_shape, dtype, low, high)
        text = f"np.take_along_axis({{0}}, {{1}}, axis={axis - draw(st.sampled_from([0, ndim]))})"
    else:
        idx = pool.index_input(draw(SMALL_SHAPES), dtype, low, high)
        text = (
            f"np.take({{0}}, {{1}}, axis={axis})"
            if how == "take"
            else f"{{0}}[{':, ' * axis}{{1}}]"
        )
    return Step(text, (a, idx), "gather", (1,), oracle and text.replace("{1}", oracle))


def scatter(draw, pool: Pool) -> Step | None:
    """x.at[idx].set(v) / .add(v) along axis 0, idx distinct positions, v of x's dtype."""
    a = pool.pick(draw, min_ndim=1)
    if a is None or pool.shape(a)[0] == 0:
        return None
    shape, dtype = pool.shape(a), pool.dtype(a)
    n = shape[0]
    k = draw(st.integers(1, min(n, 3)))
    idx_shape = draw(st.sampled_from([(k,), ()] if k == 1 else [(k,)]))
    idx = pool.index_input(idx_shape, draw(st.sampled_from(INDEX_DTYPES)), -n, n - 1, True)
    v_shape = draw(st.sampled_from([idx_shape + shape[1:], (), shape[-1:]]))
    v = pool.add_input(v_shape, dtype)
    how = "set" if dtype.kind == "b" else draw(st.sampled_from(["set", "add"]))
    text = f"{{0}}.at[{{1}}].{how}({{2}})"
    return Step(text, (a, idx, v), f"scatter_{how}", (), f"F.at_{how}({{0}}, {{1}}, {{2}})")


def dynamic_slice(draw, pool: Pool) -> Step | None:
    """lax.dynamic_slice / dynamic_update_slice with one traced int32 scalar start per axis,
    drawn from 2 before the start to 2 past the end (clamped)."""
    a = pool.pick(draw, min_ndim=1)
    if a is None:
        return None
    shape, dtype = pool.shape(a), pool.dtype(a)
    sizes = tuple(draw(st.integers(0, d)) for d in shape)
    starts = tuple(pool.index_input((), "int32", -2, d + 2) for d in shape)
    if draw(st.booleans()):
        names = ", ".join(f"{{{i + 1}}}" for i in range(len(shape)))
        text = f"F.lax.dynamic_slice({{0}}, ({names},), {sizes!r})"
        return Step(text, (a, *starts), "gather", (1,))
    update = pool.add_input(sizes, dtype)
    names = ", ".join(f"{{{i + 2}}}" for i in range(len(shape)))
    text = f"F.lax.dynamic_update_slice({{0}}, {{1}}, ({names},))"
    return Step(text, (a, update, *starts), "gather", (2,))
