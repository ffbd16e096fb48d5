"""tracejit.numpy shape/layout functions against NumPy, eagerly and under jit.

Property tests draw shapes (0-d, size-1 and size-0 dimensions included), dtypes and values
and compare the eager result and the jitted result with NumPy's: values, shape and dtype.
The hypothesis tests jit with device="numpy" (trace + passes + reference interpreter): each
example is a new graph, and compiling each would cost a compiler run; `test_compiled_*`
checks a fixed set of layout graphs on the device under test.
"""

import numpy as np
import pytest
from _finite_diff import numeric_grad
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError, UnsupportedError

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
TRACE_DEVICE = "numpy"


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=4):
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def fill(shape, dtype, seed):
    """Distinct-ish values of `dtype` (bools alternate) so layout mistakes show up."""
    values = np.asarray(np.random.default_rng(seed).integers(-50, 50, size=shape))
    return (values % 2 == 0) if dtype == np.bool_ else values.astype(dtype)


@st.composite
def arrays(draw, shape=None, dtypes=DTYPES, **shape_kw):
    shape = draw(shapes(**shape_kw)) if shape is None else shape
    return fill(shape, draw(st.sampled_from(dtypes)), draw(st.integers(0, 2**16)))


def check(np_fn, tnp_fn, *args):
    """tnp_fn eagerly and under jit equals np_fn (exactly: layout ops move values only)."""
    want = np_fn(*args)
    eager = tnp_fn(*args)
    jitted = tj.jit(tnp_fn, device=TRACE_DEVICE)(*args)
    if isinstance(want, (list, tuple)):
        assert isinstance(eager, (list, tuple)) and len(eager) == len(want) == len(jitted)
    else:
        want, eager, jitted = [want], [eager], [jitted]
    for w, e, j in zip(want, eager, jitted):
        for got in (e, j):
            assert isinstance(got, np.ndarray)
            assert got.shape == w.shape and got.dtype == w.dtype, (got.shape, got.dtype, w.shape)
            np.testing.assert_array_equal(got, w)


def same(fn_name, **kw):
    """The NumPy function and the tnp function of one name, with the same static arguments."""
    return (lambda *a: getattr(np, fn_name)(*a, **kw), lambda *a: getattr(tnp, fn_name)(*a, **kw))


# ---------------------------------------------------------------- reshape family


@st.composite
def reshape_case(draw):
    dims = draw(st.lists(st.integers(0, 4), max_size=4))
    ones = st.lists(st.just(1), max_size=2)
    src = draw(st.permutations(dims + draw(ones)))
    dst = list(draw(st.permutations(dims + draw(ones))))
    size = int(np.prod(dims, dtype=np.int64))
    if dst and size and draw(st.booleans()):
        dst[draw(st.integers(0, len(dst) - 1))] = -1
    return draw(arrays(shape=tuple(src))), tuple(dst)


@given(reshape_case())
def test_reshape(case):
    x, shape = case
    check(*same("reshape", shape=shape), x)
    check(lambda a: a.reshape(shape), lambda a: tnp.asarray(a).reshape(shape), x)


@given(arrays())
def test_ravel_and_method_forms(x):
    check(np.ravel, tnp.ravel, x)
    if x.ndim:
        check(lambda a: a.reshape(*a.shape[::-1]), lambda a: as_tnp(a).reshape(*a.shape[::-1]), x)
    check(lambda a: a.transpose(), lambda a: as_tnp(a).transpose(), x)


def as_tnp(a):
    return tnp.asarray(a)


@given(st.data())
def test_transpose_and_permute_dims(data):
    x = data.draw(arrays())
    perm = data.draw(st.permutations(range(x.ndim)))
    signed = [p - x.ndim if data.draw(st.booleans()) else p for p in perm]
    check(*same("transpose"), x)
    check(*same("transpose", axes=signed), x)
    check(lambda a: np.permute_dims(a, perm), lambda a: tnp.permute_dims(a, perm), x)


@given(st.data())
def test_swapaxes_moveaxis(data):
    x = data.draw(arrays(min_dims=1))
    axis = st.integers(-x.ndim, x.ndim - 1)
    i, j = data.draw(axis), data.draw(axis)
    check(*same("swapaxes", axis1=i, axis2=j), x)
    src = data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True))
    dst = data.draw(
        st.lists(st.integers(0, x.ndim - 1), unique=True, min_size=len(src), max_size=len(src))
    )
    check(*same("moveaxis", source=src, destination=dst), x)
    check(*same("moveaxis", source=i, destination=j), x)


@given(st.data())
def test_expand_dims(data):
    x = data.draw(arrays(max_dims=3))
    k = data.draw(st.integers(1, 3))
    n = x.ndim + k
    axes = data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k, unique=True))
    axes = tuple(a - n if data.draw(st.booleans()) else a for a in axes)
    check(*same("expand_dims", axis=axes), x)
    check(*same("expand_dims", axis=axes[0] % (x.ndim + 1)), x)


@given(st.data())
def test_squeeze(data):
    x = data.draw(arrays(max_side=2))
    check(*same("squeeze"), x)
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    axes = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()
    check(*same("squeeze", axis=axes), x)
    if ones:
        check(*same("squeeze", axis=ones[0] - x.ndim), x)


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_side=0, max_side=3), st.data())
def test_broadcast_to_and_broadcast_arrays(bshapes, data):
    xs = [data.draw(arrays(shape=s)) for s in bshapes.input_shapes]
    check(*same("broadcast_to", shape=bshapes.result_shape), xs[0])
    check(lambda *a: np.broadcast_arrays(*a), lambda *a: tnp.broadcast_arrays(*a), *xs)


@given(arrays(max_dims=3))
def test_atleast_nd(x):
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        check(*same(name), x)
    check(lambda a, b: np.atleast_2d(a, b), lambda a, b: tnp.atleast_2d(a, b), x, x)


# ---------------------------------------------------------------- joining and splitting


@st.composite
def joinable(draw, min_dims=1, same_shape=False):
    base = list(draw(shapes(min_dims=min_dims, max_dims=3)))
    axis = draw(st.integers(-len(base), len(base) - 1)) if base else 0
    count = draw(st.integers(1, 3))
    xs = []
    for _ in range(count):
        shape = list(base)
        if not same_shape:
            shape[axis] = draw(st.integers(0, 3))
        xs.append(draw(arrays(shape=tuple(shape))))
    return xs, axis


@given(joinable())
def test_concatenate(case):
    xs, axis = case
    check(lambda *a: np.concatenate(a, axis=axis), lambda *a: tnp.concatenate(a, axis=axis), *xs)
    check(lambda *a: np.concatenate(a, axis=None), lambda *a: tnp.concatenate(a, axis=None), *xs)
    check(lambda *a: np.concat(a, axis=axis), lambda *a: tnp.concat(a, axis=axis), *xs)


@given(joinable(min_dims=0, same_shape=True), st.data())
def test_stack(case, data):
    xs, _ = case
    axis = data.draw(st.integers(-xs[0].ndim - 1, xs[0].ndim))
    check(lambda *a: np.stack(a, axis=axis), lambda *a: tnp.stack(a, axis=axis), *xs)


@given(joinable(min_dims=0, same_shape=True))
def test_hstack_vstack_column_stack(case):
    xs, _ = case
    check(lambda *a: np.hstack(a), lambda *a: tnp.hstack(a), *xs)
    check(lambda *a: np.vstack(a), lambda *a: tnp.vstack(a), *xs)
    if xs[0].ndim <= 2:
        check(lambda *a: np.column_stack(a), lambda *a: tnp.column_stack(a), *xs)


@given(st.data())
def test_split_and_array_split(data):
    x = data.draw(arrays(min_dims=1))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    divisors = [d for d in range(1, 5) if n % d == 0]
    sections = data.draw(st.sampled_from(divisors))
    check(*same("split", indices_or_sections=sections, axis=axis), x)
    check(*same("array_split", indices_or_sections=data.draw(st.integers(1, 5)), axis=axis), x)
    points = data.draw(st.lists(st.integers(-n - 2, n + 2), max_size=4))
    check(*same("split", indices_or_sections=points, axis=axis), x)


# ---------------------------------------------------------------- reordering and padding


@st.composite
def array_and_axes(draw, min_dims=0, **kw):
    """An array and an axis argument: None, an int or a tuple of distinct (signed) axes."""
    x = draw(arrays(min_dims=min_dims, **kw))
    if x.ndim == 0:
        return x, None
    axes = draw(st.lists(st.integers(0, x.ndim - 1), unique=True, min_size=1))
    axes = tuple(a - x.ndim if draw(st.booleans()) else a for a in axes)
    return x, draw(st.sampled_from([None, axes[0], axes]))


@given(array_and_axes())
def test_flip(case):
    x, axis = case
    check(*same("flip", axis=axis), x)


@given(array_and_axes(), st.data())
def test_roll(case, data):
    x, axis = case
    shift = st.integers(-7, 7)
    if isinstance(axis, tuple):
        check(*same("roll", shift=tuple(data.draw(shift) for _ in axis), axis=axis), x)
        check(*same("roll", shift=data.draw(shift), axis=axis), x)
    else:
        check(*same("roll", shift=data.draw(shift), axis=axis), x)


@given(st.data())
def test_pad(data):
    x = data.draw(arrays(max_dims=3))
    width = st.integers(0, 2)
    form = data.draw(st.sampled_from(["int", "pair", "per_axis"] if x.ndim else ["int", "pair"]))
    if form == "int":
        pad_width = data.draw(width)
    elif form == "pair":
        pad_width = (data.draw(width), data.draw(width))
    else:
        pad_width = tuple((data.draw(width), data.draw(width)) for _ in range(x.ndim))
    value = data.draw(st.sampled_from([0, 1, -3, 2.5]))
    if x.dtype == np.bool_ and value not in (0, 1):
        value = True
    check(*same("pad", pad_width=pad_width, constant_values=value), x)
    check(*same("pad", pad_width=pad_width), x)


def test_pad_traced_constant_value():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = tj.jit(lambda a, v: tnp.pad(a, 1, constant_values=v))(x, np.float32(-2))
    np.testing.assert_array_equal(got, np.pad(x, 1, constant_values=-2))


# ---------------------------------------------------------------- repetition and triangles


@given(st.data())
def test_tile(data):
    x = data.draw(arrays(max_dims=3, max_side=3))
    reps = data.draw(st.lists(st.integers(0, 3), max_size=4))
    check(*same("tile", reps=tuple(reps)), x)
    check(*same("tile", reps=data.draw(st.integers(0, 3))), x)


@given(st.data())
def test_repeat(data):
    x = data.draw(arrays(max_dims=3))
    check(*same("repeat", repeats=data.draw(st.integers(0, 3))), x)
    if x.ndim:
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        counts = data.draw(
            st.lists(st.integers(0, 3), min_size=x.shape[axis], max_size=x.shape[axis])
        )
        check(*same("repeat", repeats=counts, axis=axis), x)
        check(*same("repeat", repeats=data.draw(st.integers(0, 3)), axis=axis), x)


@given(arrays(min_dims=1), st.integers(-4, 4))
def test_tril_triu(x, k):
    check(*same("tril", k=k), x)
    check(*same("triu", k=k), x)
    check(*same("tril"), x)


@given(st.data())
def test_diagonal(data):
    x = data.draw(arrays(min_dims=2))
    axis = st.integers(-x.ndim, x.ndim - 1)
    i = data.draw(axis)
    j = data.draw(axis.filter(lambda a: a % x.ndim != i % x.ndim))
    offset = data.draw(st.integers(-5, 5))
    check(*same("diagonal", offset=offset, axis1=i, axis2=j), x)


# ---------------------------------------------------------------- compiled graphs


LAYOUT_CASES = [
    (lambda a: a.reshape(3, 4).T[::-1], np.arange(12.0)),
    (lambda a: tnp_or_np(a).concatenate([a, a[::2]], axis=0), np.arange(6.0).reshape(3, 2)),
    (lambda a: tnp_or_np(a).pad(a, ((1, 0), (2, 1)), constant_values=7), np.ones((2, 2))),
    (lambda a: tnp_or_np(a).tril(a, -1) + tnp_or_np(a).triu(a, 2), np.arange(20.0).reshape(4, 5)),
    (lambda a: tnp_or_np(a).roll(tnp_or_np(a).flip(a, 1), 2, axis=0), np.arange(12).reshape(4, 3)),
    (lambda a: tnp_or_np(a).tile(a, (2, 1)) * 2, np.arange(6, dtype=np.int32).reshape(2, 3)),
    (lambda a: tnp_or_np(a).repeat(a, [1, 0, 3], axis=1), np.arange(6.0).reshape(2, 3)),
    (lambda a: tnp_or_np(a).stack(tnp_or_np(a).split(a, 2, axis=1), -1), np.ones((3, 4))),
]


def tnp_or_np(a):
    """The module matching `a`: NumPy for the expected value, tnp for the traced one."""
    return np if isinstance(a, np.ndarray) else tnp


@pytest.mark.parametrize("fn, x", LAYOUT_CASES)
def test_compiled_layout_matches_numpy(fn, x, device):
    got = tj.device_get(tj.jit(fn, device=device)(x))
    want = fn(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- errors


def test_bad_reshape_names_shapes():
    with pytest.raises(ShapeError, match=r"cannot reshape an array of shape \(2, 3\).*\(4, -1\)"):
        tnp.reshape(np.ones((2, 3)), (4, -1))
    with pytest.raises(ShapeError, match="at most one -1"):
        tj.jit(lambda a: a.reshape(-1, -1))(np.ones(4))
    with pytest.raises(ValueError, match="order must be one of 'C', 'F' or 'A'"):
        tnp.reshape(np.ones(4), (2, 2), order="Z")


def test_squeeze_of_non_unit_axis_says_its_size():
    with pytest.raises(ShapeError, match="axis 1.*its size is 3, not 1"):
        tj.jit(lambda a: tnp.squeeze(a, axis=1))(np.ones((1, 3)))


def test_join_errors():
    with pytest.raises(ShapeError, match="concatenate along axis 0"):
        tj.jit(lambda a, b: tnp.concatenate([a, b]))(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ShapeError, match="zero-dimensional"):
        tnp.concatenate([np.float64(1.0), np.float64(2.0)])
    with pytest.raises(ShapeError, match="same shape"):
        tnp.stack([np.ones(2), np.ones(3)])
    with pytest.raises(ShapeError, match="does not divide into 3 equal sections"):
        tnp.split(np.ones(4), 3)


def test_pad_and_repeat_errors():
    with pytest.raises(UnsupportedError, match="mode='maximum' is not supported"):
        tnp.pad(np.ones(3), 1, mode="maximum")
    with pytest.raises(ShapeError, match="pad_width"):
        tnp.pad(np.ones((2, 2)), ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(tj.errors.ConcretizationError):
        tj.jit(lambda a, r: tnp.repeat(a, r))(np.ones(3), np.array([1, 2, 3]))
    with pytest.raises(ShapeError, match="3 repeat counts for an axis of size 2"):
        tnp.repeat(np.ones(2), [1, 1, 1])


def test_axis_out_of_range_is_a_shape_error():
    with pytest.raises(ShapeError, match="axis 3 is out of bounds for an array of rank 2"):
        tj.jit(lambda a: tnp.flip(a, 3))(np.ones((2, 2)))
    with pytest.raises(ShapeError, match="not a permutation"):
        tnp.transpose(np.ones((2, 2)), (0, 0))


# ---------------------------------------------------------------- gradients


GRAD_CASES = [
    lambda a: (tnp.pad(a, ((1, 0), (0, 2)), constant_values=2.0) ** 2).sum(),
    lambda a: (tnp.concatenate([tnp.tril(a), tnp.roll(a, 1, 0)], 1) ** 2).sum(),
    lambda a: (tnp.tile(a, (1, 2)) * tnp.repeat(a, 2, axis=1)).sum(),
    lambda a: (tnp.stack(tnp.split(tnp.flip(a, 0), [1], axis=1)[::-1][0:1]) ** 3).sum(),
    lambda a: (tnp.diagonal(a, 1) ** 2).sum() + (tnp.moveaxis(a, 0, 1)[:3] * a[:, :3]).sum(),
]


@pytest.mark.parametrize("f", GRAD_CASES)
def test_gradients_match_finite_differences(f):
    x = np.random.default_rng(0).normal(size=(3, 4))
    want = numeric_grad(f, x)
    np.testing.assert_allclose(tj.grad(f)(x), want, atol=1e-6)
    np.testing.assert_allclose(tj.jit(tj.grad(f), device=TRACE_DEVICE)(x), want, atol=1e-6)
