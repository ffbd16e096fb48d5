"""`x[index]`, `tnp.take` and `tnp.take_along_axis` against NumPy, eagerly and under jit.

Random basic indices (ints, slices with any start/stop/step, None, Ellipsis) and advanced
ones (integer arrays, concrete or traced, and concrete boolean masks) are drawn with
hypothesis; NumPy indexing the same array with the same index is the oracle. As in
test_tnp_shape.py, the hypothesis tests jit with device="numpy" so that each drawn graph is
traced and interpreted rather than compiled.
"""

import numpy as np
import pytest
from _finite_diff import numeric_grad
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ConcretizationError

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
TRACE_DEVICE = "numpy"


def fill(shape, dtype, seed):
    values = np.asarray(np.random.default_rng(seed).integers(-50, 50, size=shape))
    return (values % 2 == 0) if dtype == np.bool_ else values.astype(dtype)


@st.composite
def arrays(draw, min_dims=0, max_dims=4, max_side=4):
    shape = draw(
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side)
    )
    return fill(shape, draw(st.sampled_from(DTYPES)), draw(st.integers(0, 2**16)))


def assert_same(got, want):
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def check_index(x, index):
    """x[index] eagerly (tnp.getitem on NumPy) and under jit (Tracer.__getitem__)."""
    want = x[index]
    assert_same(tnp.getitem(x, index), want)
    assert_same(tj.jit(lambda a: a[index], device=TRACE_DEVICE)(x), want)


# ---------------------------------------------------------------- basic indexing


def slices(n: int):
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(-3, 3).filter(bool)
    return st.builds(slice, bound, bound, step)


@st.composite
def basic_index(draw, shape):
    """A random basic index for `shape`: ints, slices, None and at most one Ellipsis."""
    items = []
    for n in shape:
        options = [slices(n)] + ([st.integers(-n, n - 1)] if n else [])
        items.append(draw(st.one_of(options)))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items[i:j] = [Ellipsis]  # the items after it index the trailing axes
    else:
        items = items[: draw(st.integers(0, len(items)))]  # trailing axes are implied
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # a bare entry, not a tuple
    return tuple(items)


@given(st.data())
def test_basic_indexing_matches_numpy(data):
    x = data.draw(arrays())
    check_index(x, data.draw(basic_index(x.shape)))


@given(st.data())
def test_negative_step_slices(data):
    x = data.draw(arrays(min_dims=1, max_side=6))

    # built negative, not filtered: a filter rejecting half the draws trips a health check
    def negative(s):
        return slice(s.start, s.stop, -abs(s.step or 1))

    index = tuple(data.draw(slices(n).map(negative)) for n in x.shape)
    check_index(x, index)


def test_indexing_methods_compose_under_jit():
    x = np.arange(60.0).reshape(3, 4, 5)

    def f(a):
        return a[1:, ::-2][..., None, 3] + a[-1, 0, ::2].sum()

    assert_same(tj.jit(f)(x), f(x))


# ---------------------------------------------------------------- advanced indexing


@st.composite
def advanced_index(draw, shape, as_list=True, newaxis=True):
    """Ints, slices, None and integer arrays (mutually broadcastable) in random positions."""
    kinds = [
        draw(st.sampled_from(["slice", "int", "array"]) if n else st.just("slice")) for n in shape
    ]
    if "array" not in kinds:
        nonzero = [i for i, n in enumerate(shape) if n]
        if not nonzero:
            return None
        kinds[draw(st.sampled_from(nonzero))] = "array"
    count = kinds.count("array")
    bshapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=2, max_side=3))
    arrays_ = iter(bshapes.input_shapes)
    items = []
    for kind, n in zip(kinds, shape):
        if kind == "slice":
            items.append(draw(slices(n)))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            idx = np.asarray(
                draw(hnp.arrays(np.int64, next(arrays_), elements=st.integers(-n, n - 1)))
            )
            items.append(idx.tolist() if as_list and idx.ndim and draw(st.booleans()) else idx)
    items = items[
        : draw(st.integers(max(i for i, k in enumerate(kinds) if k != "slice") + 1, len(items)))
    ]
    for _ in range(draw(st.integers(0, 1 if newaxis else 0))):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


@given(st.data())
def test_advanced_integer_indexing_matches_numpy(data):
    x = data.draw(arrays(min_dims=1))
    index = data.draw(advanced_index(x.shape))
    if index is not None:
        check_index(x, index)


@given(st.data())
def test_traced_integer_index_arrays(data):
    """The index arrays are jit arguments: the gather reads a traced index."""
    x = data.draw(arrays(min_dims=1))
    index = data.draw(advanced_index(x.shape, as_list=False))
    if index is None:
        return
    where = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]

    def f(a, *idx):
        items = list(index)
        for i, v in zip(where, idx):
            items[i] = v
        return a[tuple(items)]

    assert_same(tj.jit(f, device=TRACE_DEVICE)(x, *[index[i] for i in where]), x[index])


@given(st.data())
def test_single_index_array_on_any_axis(data):
    x = data.draw(arrays(min_dims=1))
    axis = data.draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    idx = fill(ishape, np.int64, data.draw(st.integers(0, 99))) % n if n else np.zeros(0, int)
    check_index(x, (slice(None),) * axis + (idx,))
    got = tj.jit(lambda a, i: a[(slice(None),) * axis + (i,)], device=TRACE_DEVICE)(x, idx)
    assert_same(got, x[(slice(None),) * axis + (idx,)])


@pytest.mark.parametrize(
    "index",
    [
        (0, slice(None), [1, 2]),  # int and array separated by a slice: broadcast dims first
        (slice(None), 0, [1, 2]),  # adjacent: broadcast dims stay in place
        ([0], None, [0]),  # None separates them too
        (Ellipsis, [[0], [1]], [2, 0, 1]),
        ([1, 0], slice(None, None, -1), [[3], [0]]),
        (np.array(1), slice(1, None)),  # a 0-d integer array acts as an int
        ([],),  # an empty list is an empty integer index
    ],
)
def test_advanced_layout_rules(index):
    check_index(np.arange(60).reshape(3, 4, 5), index)


@given(st.data())
def test_concrete_boolean_mask(data):
    x = data.draw(arrays(min_dims=1))
    start = data.draw(st.integers(0, x.ndim - 1))
    stop = data.draw(st.integers(start + 1, x.ndim))
    mask = fill(x.shape[start:stop], np.bool_, data.draw(st.integers(0, 99)))
    check_index(x, (slice(None),) * start + (mask,))
    if stop == x.ndim:
        check_index(x, (Ellipsis, mask))
    elif x.shape[stop]:
        check_index(x, (slice(None),) * start + (mask, [-1]))  # mask with an int array


def test_traced_zero_d_index():
    x = np.arange(12.0).reshape(4, 3)
    f = tj.jit(lambda a, i: a[i, 1:] * 2)
    for i in (0, 3, -1, np.int32(2)):
        assert_same(f(x, i), x[i, 1:] * 2)


def test_traced_indices_are_clamped_like_jax():
    x = np.arange(10) * 10
    idx = np.array([0, 9, 12, -1, -11, -30])
    got = tj.jit(lambda a, i: a[i], device=TRACE_DEVICE)(x, idx)
    # negatives wrap once, then everything is clamped into [0, 9]
    assert got.tolist() == [0, 90, 90, 90, 0, 0]
    got2 = tj.jit(lambda a, i, j: a.reshape(2, 5)[i, j], device=TRACE_DEVICE)(x, idx, idx)
    clamp = np.array([[0, 1, 1, 1, 0, 0], [0, 4, 4, 4, 0, 0]])
    np.testing.assert_array_equal(got2, x.reshape(2, 5)[clamp[0], clamp[1]])


def test_list_of_traced_scalars_as_index():
    x = np.arange(5.0)
    got = tj.jit(lambda a, i, j: a[[i, j]])(x, 4, 1)
    assert_same(got, x[[4, 1]])


# ---------------------------------------------------------------- take, take_along_axis


@given(st.data())
def test_take_matches_numpy(data):
    x = data.draw(arrays(min_dims=0))
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None
    n = x.size if axis is None else x.shape[axis]
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    idx = fill(ishape, np.int64, data.draw(st.integers(0, 99)))
    idx = (idx % (2 * n) - n) if n else np.zeros((0,), np.int64)
    want = np.take(x, idx, axis=axis)
    assert_same(tnp.take(x, idx, axis=axis), want)
    assert_same(tj.jit(lambda a, i: tnp.take(a, i, axis=axis), device=TRACE_DEVICE)(x, idx), want)
    if n:
        assert_same(
            tnp.take(x, idx * 3 + 1, axis=axis, mode="wrap"),
            np.take(x, idx * 3 + 1, axis=axis, mode="wrap"),
        )
        assert_same(
            tnp.take(x, idx * 3, axis=axis, mode="clip"),
            np.take(x, idx * 3, axis=axis, mode="clip"),
        )


def test_take_clamps_out_of_range_indices():
    x = np.array([1.0, 2.0, 3.0])
    assert tnp.take(x, [5, -1, -7]).tolist() == [3.0, 3.0, 1.0]
    assert tj.jit(lambda a: a.take(np.array([5, -1, -7])))(x).tolist() == [3.0, 3.0, 1.0]


@given(st.data())
def test_take_along_axis_matches_numpy(data):
    x = data.draw(arrays(min_dims=1, max_dims=3))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    # indices broadcast against x on the other axes: each of those dims is x's, or 1
    ishape = [data.draw(st.sampled_from([d, 1])) for d in x.shape]
    ishape[axis] = data.draw(st.integers(0, 3)) if n else 0
    idx = fill(tuple(ishape), np.int64, data.draw(st.integers(0, 99)))
    idx = idx % n - (n if data.draw(st.booleans()) else 0) if n else idx
    want = np.take_along_axis(x, idx, axis=axis)
    assert_same(tnp.take_along_axis(x, idx, axis=axis), want)
    f = tj.jit(lambda a, i: tnp.take_along_axis(a, i, axis=axis), device=TRACE_DEVICE)
    assert_same(f(x, idx), want)
    flat = np.zeros(3, np.int64) if x.size else np.zeros(0, np.int64)
    assert_same(tnp.take_along_axis(x, flat, axis=None), np.take_along_axis(x, flat, axis=None))


def test_take_along_axis_broadcasts_arr_too():
    x = np.arange(4.0).reshape(1, 4)
    idx = np.array([[3, 0], [1, 1], [2, 3]])
    assert_same(tnp.take_along_axis(x, idx, axis=1), np.take_along_axis(x, idx, axis=1))


# ---------------------------------------------------------------- x.at[index] updates


@given(st.data())
def test_at_set_and_add_match_numpy(data):
    x = data.draw(arrays(min_dims=1, max_dims=3))
    basic = data.draw(st.booleans())
    index = data.draw(basic_index(x.shape) if basic else advanced_index(x.shape, newaxis=False))
    if index is None:
        return
    values = fill(x[index].shape, x.dtype, data.draw(st.integers(0, 99)))
    want_set = x.copy()
    want_set[index] = values  # repeated indices: the last update wins
    f_set = tj.jit(lambda a, v: a.at[index].set(v), device=TRACE_DEVICE)
    assert_same(f_set(x, values), want_set)
    assert_same(tnp._indexing.AtIndexer(x)[index].set(values), want_set)
    assert_same(tj.jit(lambda a: a.at[index].get(), device=TRACE_DEVICE)(x), x[index])
    items = index if isinstance(index, tuple) else (index,)
    if any(item is None or item is Ellipsis for item in items):
        return  # np.add.at takes no None or Ellipsis
    want_add = x.copy()
    np.add.at(want_add, index, values)  # repeated indices accumulate
    f_add = tj.jit(lambda a, v: a.at[index].add(v), device=TRACE_DEVICE)
    assert_same(f_add(x, values), want_add)


def test_at_with_traced_indices_and_scalar_values():
    x = np.zeros((3, 4), np.float32)
    got = tj.jit(lambda a, i: a.at[i, 1:].add(2.0).at[0, i].set(-1.0))(x, np.array([2, 0]))
    want = x.copy()
    want[[2, 0], 1:] += 2.0
    want[0, [2, 0]] = -1.0
    assert_same(got, want)


def test_a_python_int_index_records_the_general_paths_nodes():
    # x[i] for a Python int takes a short path; np.int64(i) takes the general one
    from tracejit.cache.graph_key import graph_fingerprint

    for shape in [(3, 4), (1, 2), (5,), (2, 1, 3)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        for i in range(-shape[0], shape[0]):
            fast = tj.make_ir(lambda a, i=i: a[i])(x)
            general = tj.make_ir(lambda a, i=i: a[np.int64(i)])(x)
            assert graph_fingerprint(fast) == graph_fingerprint(general)
            np.testing.assert_array_equal(tj.jit(lambda a, i=i: a[i], device="numpy")(x), x[i])


# ---------------------------------------------------------------- errors


def test_out_of_range_int_names_axis_and_size():
    x = np.ones((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        tnp.getitem(x, (0, 3))
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        tj.jit(lambda a: a[-3])(x)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 3"):
        tj.jit(lambda a: a[:, [0, 7]])(x)


def test_traced_boolean_mask_explains_the_alternatives():
    x = np.arange(4.0)
    with pytest.raises(ConcretizationError) as info:
        tj.jit(lambda a: a[a > 1])(x)
    message = str(info.value)
    assert "data-dependent shape" in message
    assert "tnp.where(mask, x, 0)" in message and "concrete NumPy array" in message
    assert "test_indexing.py" in info.value.source  # the user's line, also its note


def test_other_index_errors():
    x = np.ones((2, 3))
    with pytest.raises(IndexError, match="too many indices for array"):
        tj.jit(lambda a: a[0, 0, 0])(x)
    with pytest.raises(IndexError, match="single ellipsis"):
        tnp.getitem(x, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="only integers, slices"):
        tnp.getitem(x, np.array([0.5]))
    with pytest.raises(IndexError, match="boolean index did not match"):
        tnp.getitem(x, np.array([True, False, True]))
    with pytest.raises(IndexError, match="could not be broadcast together"):
        tnp.getitem(x, ([0, 1], [0, 1, 2]))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        tnp.getitem(x, slice(None, None, 0))
    with pytest.raises(tj.errors.UnsupportedError, match="immutable"):
        tj.jit(lambda a: a.__setitem__(0, 1.0))(x)
    with pytest.raises(ConcretizationError, match="slice bound"):
        tj.jit(lambda a, i: a[i:])(x, 1)


# ---------------------------------------------------------------- gradients


GRAD_CASES = [
    lambda a: (a[::-2, 1:3][..., None] ** 2).sum(),
    lambda a: (a[[0, 2, 2], ::-1] ** 2).sum(),  # a repeated row gets both contributions
    lambda a: (a[[[0], [2]], [1, 3]] ** 3).sum(),
    lambda a: (tnp.take_along_axis(a, np.array([[1, 1], [0, 3], [2, 0]]), 1) ** 2).sum(),
    lambda a: (a.at[0, 1:].set(1.0) ** 2).sum(),
    lambda a: (a.at[[1, 1], 0].add(a[0, 0]) ** 2).sum(),
]


@pytest.mark.parametrize("f", GRAD_CASES)
def test_gradients_match_finite_differences(f):
    x = np.random.default_rng(0).normal(size=(3, 4))
    g = tj.jit(f, device=TRACE_DEVICE)  # x.at exists on traced arrays, not on NumPy ones
    want = numeric_grad(g, x)
    np.testing.assert_allclose(tj.grad(f)(x), want, atol=1e-6)
    np.testing.assert_allclose(tj.jit(tj.grad(f), device=TRACE_DEVICE)(x), want, atol=1e-6)
