"""Drawers of reductions, layout and indexing steps, matmul, and the numerics patterns."""

from __future__ import annotations

import math

from _fuzz_ops import Pool, Step, axes_of, normalized
from hypothesis import strategies as st

SCANS = ("cumsum", "cumprod", "nancumprod")


def _axis_text(axis) -> str:
    return "None" if axis is None else repr(axis)


def reduction(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw)
    if a is None:
        return None
    ndim = len(pool.shape(a))
    name = draw(
        st.sampled_from(["sum", "prod", "mean", "max", "min", "argmax", "argmin", "var", "std"])
    )
    if name in ("argmax", "argmin"):
        axis = draw(st.integers(-ndim, ndim - 1)) if ndim else None
        keep = ""
        if axis is not None and draw(st.booleans()):
            keep = ", keepdims=True"
        params = (None if axis is None else axis % ndim, bool(keep))
        return Step(f"np.{name}({{0}}, axis={_axis_text(axis)}{keep})", (a,), name, params)
    axis = axes_of(draw, ndim)
    keepdims = draw(st.booleans())
    extra = f", ddof={draw(st.integers(0, 1))}" if name in ("var", "std") else ""
    ddof = int(extra[-1]) if extra else 0
    text = f"np.{name}({{0}}, axis={_axis_text(axis)}, keepdims={keepdims}{extra})"
    return Step(text, (a,), name, (normalized(axis, ndim), keepdims, ddof))


def scan(draw, pool: Pool) -> Step | None:
    """cumsum, cumprod or nancumprod along one axis (mostly the longest) or of the flattened
    array. Products are mostly of floats, a third of them of a new long input of ordinary
    numbers: a NaN or infinity early in a row hides the order of the products after it."""
    name = draw(st.sampled_from(SCANS))
    product = name != "cumsum"
    if product and draw(st.integers(0, 2)) == 2:
        n = draw(st.integers(3, 48))
        shape = draw(st.sampled_from([(n,), (n, draw(st.integers(1, 5))), (2, n)]))
        dtype = draw(st.sampled_from(["float32", "float64"]))
        a = pool.add_input(shape, dtype, special=False)
    else:
        a = pool.pick(draw, kinds="f" if product and draw(st.booleans()) else "bif")
    a = pool.pick(draw) if a is None else a
    if a is None:
        return None
    shape = pool.shape(a)
    how = draw(st.sampled_from(["longest", "any", "flat"])) if shape else "flat"
    if how == "flat":
        axis = None
    elif how == "longest":
        longest = max(range(len(shape)), key=lambda i: shape[i])
        axis = longest - draw(st.sampled_from([0, len(shape)]))
    else:
        axis = draw(st.integers(-len(shape), len(shape) - 1))
    params = (None if axis is None else axis % len(shape), False)
    return Step(f"np.{name}({{0}}, axis={_axis_text(axis)})", (a,), name, params)


def _reshape_target(draw, shape) -> tuple[int, ...]:
    size = math.prod(shape)
    if size == 0:
        dims = list(shape)
        draw(st.randoms()).shuffle(dims)
        return tuple(dims)
    factors = []
    n = size
    for p in (2, 3, 5, 7):
        while n % p == 0:
            factors.append(p)
            n //= p
    if n > 1:
        factors.append(n)
    dims = []
    for f in draw(st.permutations(factors)):
        if dims and draw(st.booleans()):
            dims[-1] *= f
        else:
            dims.append(f)
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    if dims and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


def _slice_text(draw, n: int) -> str:
    step = draw(st.sampled_from([1, 1, 2, -1, -2, 3]))
    start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    parts = ["" if start is None else str(start), "" if stop is None else str(stop)]
    return ":".join(parts) + ("" if step == 1 else f":{step}")


def layout(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="bifc")
    if a is None:
        return None
    shape = pool.shape(a)
    ndim = len(shape)
    kinds = ["reshape", "expand", "broadcast", "stack"]
    if ndim:
        kinds += ["transpose", "slice", "flip", "index", "take", "concat", "swap", "roll"]
    if ndim >= 2:
        kinds += ["tri"]
    kind = draw(st.sampled_from(kinds))
    if kind == "reshape":
        return Step(f"np.reshape({{0}}, {_reshape_target(draw, shape)!r})", (a,), "layout")
    if kind == "expand":
        axis = draw(st.integers(-ndim - 1, ndim))
        if 1 in shape and draw(st.booleans()):
            return Step(f"np.squeeze({{0}}, axis={shape.index(1)})", (a,), "layout")
        return Step(f"np.expand_dims({{0}}, {axis})", (a,), "layout")
    if kind == "broadcast":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        target = lead + tuple(draw(st.sampled_from([d, 2])) if d == 1 else d for d in shape)
        return Step(f"np.broadcast_to({{0}}, {target!r})", (a,), "layout")
    if kind == "stack":
        axis = draw(st.integers(-ndim - 1, ndim))
        return Step(f"np.stack([{{0}}, {{0}}], axis={axis})", (a,), "layout")
    axis = draw(st.integers(0, ndim - 1))
    return _axis_layout(draw, pool, a, kind, axis)


def _axis_layout(draw, pool: Pool, a: int, kind: str, axis: int) -> Step:
    shape = pool.shape(a)
    ndim = len(shape)
    if kind == "transpose":
        return Step(
            f"np.transpose({{0}}, {tuple(draw(st.permutations(range(ndim))))!r})", (a,), "layout"
        )
    if kind == "swap":
        return Step(
            f"np.swapaxes({{0}}, {axis}, {draw(st.integers(-ndim, ndim - 1))})", (a,), "layout"
        )
    if kind == "slice":
        index = ", ".join(_slice_text(draw, n) for n in shape[: draw(st.integers(1, ndim))])
        return Step(f"{{0}}[{index}]", (a,), "layout")
    if kind == "flip":
        return Step(f"np.flip({{0}}, axis={axis})", (a,), "layout")
    if kind == "roll":
        return Step(f"np.roll({{0}}, {draw(st.integers(-5, 5))}, axis={axis})", (a,), "layout")
    if kind == "tri":
        which = draw(st.sampled_from(["tril", "triu"]))
        return Step(f"np.{which}({{0}}, {draw(st.integers(-2, 2))})", (a,), "layout")
    n = shape[axis]
    if kind == "concat":
        other = list(shape)
        other[axis] = draw(st.integers(0, 3))
        b = pool.add_input(other, draw(st.sampled_from(["bool", "int32", "float32", "float64"])))
        return Step(f"np.concatenate([{{0}}, {{1}}], axis={axis})", (a, b), "layout")
    if n == 0:
        return Step("{0}[..., None]", (a,), "layout")
    # At least one index: tnp.take(x, []) raises TypeError (an empty list is float64), reported.
    picks = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4))
    if kind == "take":
        return Step(f"np.take({{0}}, {picks!r}, axis={axis})", (a,), "layout")
    lead = ":, " * axis
    return Step(f"{{0}}[{lead}{picks[0]}]", (a,), "layout")


def matmul(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="ifc", min_ndim=1)
    if a is None:
        return None
    shape = pool.shape(a)
    k = shape[-1]
    m = draw(st.integers(0, 4))
    choices = [(k,), (k, m)]
    if len(shape) >= 2:
        choices.append(shape[:-2] + (k, m))
    b_shape = draw(st.sampled_from(choices))
    dtypes = ["float32", "float64", "int32", "int64", "complex64", "complex128"]
    dtype = draw(st.sampled_from(dtypes))
    b = pool.add_input(b_shape, dtype)
    text = draw(st.sampled_from(["({0} @ {1})", "np.matmul({0}, {1})"]))
    return Step(text, (a, b), "matmul")


def pattern(draw, pool: Pool) -> Step | None:
    """The numerics rewrites' naive forms and the tj.nn functions that compute them stably."""
    a = pool.pick(draw, kinds="f", min_ndim=1)
    if a is None:
        return None
    ndim = len(pool.shape(a))
    axis = draw(st.integers(-ndim, ndim - 1))
    axes = normalized(axis, ndim)
    if pool.shape(a)[axes[0]] == 0:
        return None  # tj.nn's max-shift refuses a size-0 axis with a ShapeError
    forms = {
        "lse": ("np.log(np.sum(np.exp({0}), axis=AX))", "F.logsumexp({0}, AXES)"),
        "log_softmax": (
            "np.log(np.exp({0}) / np.sum(np.exp({0}), axis=AX, keepdims=True))",
            "F.log_softmax({0}, AXES)",
        ),
        "nn_lse": ("F.nn.logsumexp({0}, axis=AX)", "F.logsumexp({0}, AXES)"),
        "nn_log_softmax": ("F.nn.log_softmax({0}, axis=AX)", "F.log_softmax({0}, AXES)"),
        "nn_softmax": ("F.nn.softmax({0}, axis=AX)", "F.softmax({0}, AXES)"),
    }
    name = draw(st.sampled_from(sorted(forms)))
    text, oracle = (s.replace("AXES", repr(axes)).replace("AX", repr(axis)) for s in forms[name])
    rule = name.removeprefix("nn_")
    return Step(text, (a,), rule, (axes,), oracle)


def argmax_pattern(draw, pool: Pool) -> Step | None:
    """`x == max(x, axis, keepdims)` (the one-hot of softmax/max gradients) and
    `take_along_axis(x, argmax(x))`: exact for any implementation that computes x once."""
    a = pool.pick(draw, kinds="if", min_ndim=1)
    if a is None or 0 in pool.shape(a):
        return None
    ndim = len(pool.shape(a))
    axis = draw(st.integers(-ndim, ndim - 1))
    if draw(st.booleans()):
        text = f"({{0}} == np.max({{0}}, axis={axis}, keepdims=True))"
        return Step(text, (a,), "is_max", (axis % ndim,))
    index = f"np.argmax({{0}}, axis={axis}, keepdims=True)"
    return Step(f"np.take_along_axis({{0}}, {index}, axis={axis})", (a,), "along", (axis % ndim,))


def at_update(draw, pool: Pool) -> Step | None:
    """`x.at[index].set(c)` / `.add(c)` with a weak literal `c` of x's kind (distinct indices)."""
    from _fuzz_draw_elementwise import literal_for

    a = pool.pick(draw, min_ndim=1)
    if a is None or pool.shape(a)[0] == 0:
        return None
    n = pool.shape(a)[0]
    index = draw(
        st.sampled_from(
            [
                str(draw(st.integers(-n, n - 1))),
                _slice_text(draw, n),
                repr(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))),
            ]
        )
    )
    kind = pool.dtype(a).kind
    lit = literal_for(draw, kind) if kind != "b" else draw(st.sampled_from(["True", "False"]))
    how = draw(st.sampled_from(["set", "add"]) if kind != "b" else st.just("set"))
    text = f"{{0}}.at[{index}].{how}({lit})"
    return Step(text, (a,), f"at_{how}", (index, lit), f"F.at_{how}({{0}}, np.s_[{index}], {lit})")
