"""tracejit.numpy creation functions and products (matmul, dot, tensordot, einsum, ...) against
NumPy: values and result dtypes, eager and under `jit`, over drawn shapes, dtypes and values.

As in test_tnp_reductions.py, property tests run `jit` on the reference executor so that each
drawn example checks the traced graph without a compile; one batched test per family runs
through the device under test.
"""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ConcretizationError, ShapeError

ALL_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
DTYPE_ARGS = [None, np.float32, np.float64, np.int32, np.int64, np.bool_, "float32", int, float]
REFERENCE = "numpy"  # the executor of the property tests: see the module docstring


def _elements(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind == "i":
        return st.integers(-5, 5)
    return st.floats(-10, 10, width=dtype.itemsize * 8)


def array_of(draw, shape, dtype):
    return draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))


def assert_matches(got, expected, rtol: float | None = None, atol: float = 0.0):
    expected = np.asarray(expected)
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.kind == "f":
        if rtol is None:
            rtol = 1e-4 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol or rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def check(fn_name, *args, rtol=None, atol=0.0, **kwargs):
    """`tnp.<fn>(*args)` eager and jitted (array arguments traced) equals `np.<fn>`."""
    with np.errstate(all="ignore"):
        expected = getattr(np, fn_name)(*args, **kwargs)
    fn = getattr(tnp, fn_name)
    assert_matches(fn(*args, **kwargs), expected, rtol, atol)
    jitted = tj.jit(lambda *xs: fn(*xs, **kwargs), device=REFERENCE)
    assert_matches(jitted(*args), expected, rtol, atol)


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


# ---------------------------------------------------------------- filled arrays


@given(shape=st.one_of(shapes, st.integers(0, 4)), dtype=st.sampled_from(DTYPE_ARGS))
def test_zeros_ones_empty_match_numpy(shape, dtype):
    for fn in ("zeros", "ones"):
        assert_matches(getattr(tnp, fn)(shape, dtype=dtype), getattr(np, fn)(shape, dtype=dtype))
    assert_matches(tnp.empty(shape, dtype), np.zeros(shape, dtype))
    assert tnp.zeros(shape).dtype == np.float64


@given(
    shape=shapes,
    fill=st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.booleans()),
    dtype=st.sampled_from(DTYPE_ARGS),
)
def test_full_matches_numpy(shape, fill, dtype):
    assert_matches(tnp.full(shape, fill, dtype=dtype), np.full(shape, fill, dtype=dtype))


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES), like_dtype=st.sampled_from(DTYPE_ARGS))
def test_like_functions_match_numpy_eager_and_traced(data, dtype, like_dtype):
    x = array_of(data.draw, data.draw(shapes), dtype)
    new_shape = data.draw(st.one_of(st.none(), shapes))
    cases = {
        "zeros_like": {},
        "ones_like": {},
        "full_like": {"fill_value": 3},
        "empty_like": {},
    }
    for name, extra in cases.items():
        np_name = "zeros_like" if name == "empty_like" else name
        expected = getattr(np, np_name)(x, dtype=like_dtype, shape=new_shape, **extra)
        fn = getattr(tnp, name)
        assert_matches(fn(x, dtype=like_dtype, shape=new_shape, **extra), expected)
        traced = tj.jit(
            lambda a, fn=fn, e=extra: fn(a, dtype=like_dtype, shape=new_shape, **e),
            device=REFERENCE,
        )
        assert_matches(traced(x), expected)


def test_like_of_a_tracer_is_a_broadcast_scalar_not_a_big_constant():
    graph = tj.make_ir(lambda a: tnp.ones_like(a))(np.zeros((64, 64), np.float32))
    consts = [n for n in graph.nodes if n.prim.name == "const"]
    assert [n.attrs["value"].array.shape for n in consts] == [()]


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_full_with_a_traced_fill_value_broadcasts_it(data, dtype):
    v = array_of(data.draw, data.draw(hnp.array_shapes(min_dims=0, max_dims=1)), dtype)
    out = tj.jit(lambda f: tnp.full((3, *v.shape), f), device=REFERENCE)(v)
    assert_matches(out, np.full((3, *v.shape), v))


# ---------------------------------------------------------------- ranges


@given(
    start=st.integers(-10, 10),
    stop=st.one_of(st.none(), st.integers(-10, 10)),
    step=st.sampled_from([None, 1, 2, -1, -3]),
    dtype=st.sampled_from([None, np.int32, np.int64, np.float32, np.float64]),
    as_float=st.booleans(),
)
def test_arange_matches_numpy(start, stop, step, dtype, as_float):
    if as_float:
        start = start / 4
    assert_matches(tnp.arange(start, stop, step, dtype=dtype), np.arange(start, stop, step, dtype))


def test_arange_of_a_traced_bound_is_a_concretization_error():
    f = tj.jit(lambda n: tnp.arange(n), device=REFERENCE)
    with pytest.raises(ConcretizationError, match="arange bound.*'n'"):
        f(3)


@given(
    start=st.floats(-10, 10),
    stop=st.floats(-10, 10),
    num=st.integers(0, 6),
    endpoint=st.booleans(),
    dtype=st.sampled_from([None, np.float32, np.float64, np.int64]),
)
def test_linspace_matches_numpy(start, stop, num, endpoint, dtype):
    expected = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    assert_matches(tnp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), expected)


@given(
    data=st.data(),
    num=st.integers(0, 6),
    endpoint=st.booleans(),
    axis=st.sampled_from([0, -1]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_linspace_with_traced_bounds_matches_numpy(data, num, endpoint, axis, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    start, stop = array_of(data.draw, shape, dtype), array_of(data.draw, shape, dtype)
    expected = np.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    f = tj.jit(lambda a, b: tnp.linspace(a, b, num, endpoint=endpoint, axis=axis), device=REFERENCE)
    assert_matches(f(start, stop), expected, atol=1e-5 if dtype == np.float32 else 1e-12)


# ---------------------------------------------------------------- matrices


@given(
    n=st.integers(0, 5),
    m=st.one_of(st.none(), st.integers(0, 5)),
    k=st.integers(-6, 6),
    dtype=st.sampled_from(DTYPE_ARGS),
)
def test_eye_tri_identity_match_numpy(n, m, k, dtype):
    assert_matches(tnp.eye(n, m, k, dtype=dtype), np.eye(n, m, k, dtype=dtype))
    assert_matches(tnp.tri(n, m, k, dtype=dtype), np.tri(n, m, k, dtype=dtype))
    assert_matches(tnp.identity(n, dtype=dtype), np.identity(n, dtype=dtype))


# ---------------------------------------------------------------- conversion


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_asarray_of_nested_lists_with_tracers_stacks_them(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    a, b = array_of(data.draw, shape, dtype), array_of(data.draw, shape, dtype)
    f = tj.jit(lambda x, y: tnp.asarray([[x, y], [y, x]]), device=REFERENCE)
    assert_matches(f(a, b), np.asarray([[a, b], [b, a]]))
    g = tj.jit(lambda x, y: tnp.array([x, y], dtype=np.float64, ndmin=4), device=REFERENCE)
    assert_matches(g(a, b), np.array([a, b], dtype=np.float64, ndmin=4))


@given(
    value=st.one_of(
        st.lists(st.integers(-5, 5), max_size=4),
        st.lists(st.lists(st.floats(-5, 5), min_size=2, max_size=2), max_size=3),
        st.booleans(),
        st.floats(-5, 5),
    ),
    dtype=st.sampled_from(DTYPE_ARGS),
)
def test_asarray_and_array_of_python_values_match_numpy(value, dtype):
    assert_matches(tnp.asarray(value, dtype=dtype), np.asarray(value, dtype=dtype))
    assert_matches(tnp.array(value, dtype=dtype), np.array(value, dtype=dtype))


def test_asarray_of_a_ragged_list_with_tracers_is_a_shape_error():
    f = tj.jit(lambda x: tnp.asarray([x, 1.0]), device=REFERENCE)
    with pytest.raises(ShapeError, match="rectangular"):
        f(np.ones(2))


@given(data=st.data(), src=st.sampled_from(ALL_DTYPES), dst=st.sampled_from(ALL_DTYPES))
def test_astype_matches_numpy(data, src, dst):
    x = array_of(data.draw, data.draw(shapes), src)
    expected = x.astype(dst)
    assert_matches(tnp.astype(x, dst), expected)
    assert_matches(tj.jit(lambda a: tnp.astype(a, dst), device=REFERENCE)(x), expected)
    assert_matches(tj.jit(lambda a: a.astype(dst), device=REFERENCE)(x), expected)


KINDS = ["bool", "signed integer", "integral", "real floating", "numeric"]


@given(dtype=st.sampled_from(ALL_DTYPES), kind=st.sampled_from(KINDS + ALL_DTYPES))
def test_isdtype_matches_numpy(dtype, kind):
    np_kind = kind if isinstance(kind, str) else np.dtype(kind)
    assert tnp.isdtype(dtype, kind) == np.isdtype(np.dtype(dtype), np_kind)
    assert tnp.isdtype(dtype, (kind, "bool")) == np.isdtype(np.dtype(dtype), (np_kind, "bool"))


# ---------------------------------------------------------------- matmul


@st.composite
def matmul_operands(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    batch_a, batch_b = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3)
    ).input_shapes
    a_shape = draw(st.sampled_from([(k,), (*batch_a, m, k)]))
    b_shape = draw(st.sampled_from([(k,), (*batch_b, k, n)]))
    return array_of(draw, a_shape, dtype), array_of(draw, b_shape, dtype)


@given(operands=matmul_operands())
def test_matmul_matches_numpy(operands):
    a, b = operands
    check("matmul", a, b)
    expected = a @ b
    assert_matches(tj.jit(lambda x, y: x @ y, device=REFERENCE)(a, b), expected)


@given(dtypes_=st.tuples(st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES)))
def test_matmul_promotes_mixed_dtypes_and_python_scalars_like_numpy(dtypes_):
    a = np.arange(6).reshape(2, 3).astype(dtypes_[0])
    b = np.arange(6).reshape(3, 2).astype(dtypes_[1])
    check("matmul", a, b)


def test_matmul_of_mismatched_shapes_names_both_shapes():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    with pytest.raises(ShapeError, match=r"matmul: shapes \(2, 3\) and \(4, 5\) do not fit"):
        tnp.matmul(a, b)
    f = tj.jit(lambda x, y: x @ y, device=REFERENCE)
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4, 5\)") as err:
        f(a, b)
    assert "test_tnp_creation_linalg.py" in err.value.source  # the user's line, also its note
    with pytest.raises(ShapeError, match=r"\(2, 2, 3\) and \(3, 3, 4\).*batch"):
        tnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4)))
    with pytest.raises(ShapeError, match="at least one dimension"):
        tnp.matmul(np.float32(2), a)


def test_matmul_of_a_batch_by_a_matrix_does_not_copy_the_matrix():
    graph = tj.make_ir(lambda x, w: x @ w)(np.ones((8, 5, 3), np.float32), np.ones((3, 4)))
    assert not any(n.prim.name == "broadcast_in_dim" for n in graph.nodes), str(graph)


# ---------------------------------------------------------------- dot, vdot, inner, outer


@st.composite
def dot_operands(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    a_shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    b_shape = list(draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
    if a_shape and b_shape:
        b_shape[-2 if len(b_shape) >= 2 else 0] = a_shape[-1]
    return array_of(draw, a_shape, dtype), array_of(draw, tuple(b_shape), dtype)


@given(operands=dot_operands())
def test_dot_matches_numpy(operands):
    check("dot", *operands)


@given(operands=dot_operands())
def test_inner_and_outer_match_numpy(operands):
    a, b = operands
    check("outer", a, b)
    if a.ndim and b.ndim:  # inner contracts the last axes
        b = np.swapaxes(b, -1, -2) if b.ndim >= 2 else b
    check("inner", a, b)


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_vdot_matches_numpy(data, dtype):
    a = array_of(data.draw, data.draw(shapes), dtype)
    b = array_of(data.draw, (a.size,), dtype)
    check("vdot", a, b)


@st.composite
def tensordot_case(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shared = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    fa = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    fb = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    a = array_of(draw, fa + shared, dtype)
    b = array_of(draw, shared + fb, dtype)
    if draw(st.booleans()):
        return a, b, len(shared)
    # the same contraction written as axis lists, with b's shared axes moved to the back
    perm = list(range(len(shared), b.ndim)) + list(range(len(shared)))
    b = np.transpose(b, perm)
    axes_a = [len(fa) + i for i in range(len(shared))]
    axes_b = [b.ndim - len(shared) + i - b.ndim * draw(st.booleans()) for i in range(len(shared))]
    return a, b, (axes_a, axes_b)


@given(case=tensordot_case())
def test_tensordot_matches_numpy(case):
    a, b, axes = case
    check("tensordot", a, b, axes=axes)


def test_tensordot_of_mismatched_axes_names_both_shapes():
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4, 5\).*axis 1.*size 3.*axis 0.*4"):
        tnp.tensordot(np.ones((2, 3)), np.ones((4, 5)), axes=1)


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES))
def test_vecdot_and_matrix_transpose_match_numpy(data, dtype):
    a_shape, b_shape = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3)
    ).input_shapes
    n = data.draw(st.integers(0, 3))
    a = array_of(data.draw, (*a_shape[:-1], n), dtype)
    b = array_of(data.draw, (*b_shape[:-1], n), dtype)
    check("vecdot", a, b)
    if a.ndim >= 2:
        check("matrix_transpose", a)
        assert_matches(tj.jit(lambda x: x.mT, device=REFERENCE)(a), np.swapaxes(a, -1, -2))


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES), offset=st.integers(-3, 3))
def test_trace_matches_numpy(data, dtype, offset):
    x = array_of(data.draw, data.draw(hnp.array_shapes(min_dims=2, max_dims=3, max_side=4)), dtype)
    axis1, axis2 = data.draw(st.permutations(range(x.ndim)))[:2]
    check("trace", x, offset=offset, axis1=axis1, axis2=axis2)


@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_linalg_norm_matches_numpy(data, dtype):
    x = array_of(data.draw, data.draw(hnp.array_shapes(min_dims=1, max_dims=2)), dtype)
    expected = np.linalg.norm(x)
    assert_matches(tnp.linalg.norm(x), expected)
    assert_matches(tj.jit(lambda a: np.linalg.norm(a), device=REFERENCE)(x), expected)
    assert_matches(tnp.linalg.norm(x, axis=-1), np.linalg.norm(x, axis=-1))


# ---------------------------------------------------------------- einsum

EINSUM_SPECS = [
    "ij,jk->ik",
    "bij,bjk->bik",
    "ij->ji",
    "ii->i",
    "ij->",
    "i,i->",
    "i,j->ij",
    "ij,ij->i",
    "ij,ij->ij",
    "ij,jk",
    "ii",
    "ij,j->i",
    "bij,jk->bik",
    "ijk->kji",
    "iij->ji",
    "ij,jk,kl->il",
    "i->",
    "ij->j",
]


@given(
    spec=st.sampled_from(EINSUM_SPECS),
    data=st.data(),
    dtype=st.sampled_from(ALL_DTYPES),
)
def test_einsum_matches_numpy(spec, data, dtype):
    sizes = {c: data.draw(st.integers(0, 3)) for c in "bijkl"}
    ins = spec.split("->")[0].split(",")
    ops = [array_of(data.draw, tuple(sizes[c] for c in lab), dtype) for lab in ins]
    expected = np.einsum(spec, *ops)
    assert_matches(tnp.einsum(spec, *ops), expected)
    assert_matches(tj.jit(lambda *xs: tnp.einsum(spec, *xs), device=REFERENCE)(*ops), expected)


def test_einsum_broadcasts_size1_axes_and_rejects_bad_labels():
    a, b = np.arange(3.0), np.ones(1)
    assert_matches(tnp.einsum("i,i->i", a, b), np.einsum("i,i->i", a, b))
    with pytest.raises(ShapeError, match=r"label 'j'.*\[2, 3\]"):
        tnp.einsum("ij,jk->ik", np.ones((2, 2)), np.ones((3, 2)))
    with pytest.raises(ShapeError, match="2 labels but shape"):
        tnp.einsum("ij->i", np.ones(3))


# ---------------------------------------------------------------- the device under test


def test_creation_and_products_compile_for_the_test_device(device):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 4)).astype(np.float32)
    w = rng.normal(size=(4, 3)).astype(np.float32)
    s = rng.normal(size=(4, 4)).astype(np.float32)

    def f(m, a, b, c):  # m is numpy (the oracle) or tracejit.numpy
        return (m.matmul(a, b), a @ m.ones_like(b), m.dot(c, b), m.einsum("bij,jk->bik", a, b),
                m.einsum("ii->i", c), m.tensordot(a, c, axes=1), m.trace(c), m.outer(c[0], b[0]),
                m.eye(4, dtype=np.float32) * c, m.vecdot(a, c[0]), m.linspace(0.0, 1.0, 5),
                m.arange(3) + m.zeros_like(c[0, :3], dtype=np.int64))  # fmt: skip

    got = tj.device_get(tj.jit(lambda a, b, c: f(tnp, a, b, c), device=device)(x, w, s))
    for g, e in zip(got, f(np, x, w, s)):
        assert_matches(g, e, rtol=1e-4, atol=1e-5)
