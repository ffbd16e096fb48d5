"""Plain NumPy calls on tracers (__array_ufunc__ / __array_function__) trace exactly like tnp."""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

X = np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(3, 4)

PAIRS = [
    (lambda x: np.exp(x), lambda x: tnp.exp(x)),
    (lambda x: np.sum(x, axis=1), lambda x: tnp.sum(x, axis=1)),
    (lambda x: np.where(x > 1, x, 0.0), lambda x: tnp.where(x > 1, x, 0.0)),
    (lambda x: np.maximum(x, 1.0), lambda x: tnp.maximum(x, 1.0)),
    (lambda x: np.mean(x, axis=0, keepdims=True), lambda x: tnp.mean(x, axis=0, keepdims=True)),
    (lambda x: np.reshape(x, (4, 3)), lambda x: tnp.reshape(x, (4, 3))),
    (lambda x: np.add.reduce(x, axis=1), lambda x: tnp.sum(x, axis=1)),
    (lambda x: np.log1p(x) * 2 - x, lambda x: tnp.log1p(x) * 2 - x),
]


@pytest.mark.parametrize("np_fn, tnp_fn", PAIRS)
def test_numpy_call_traces_like_tnp(np_fn, tnp_fn):
    assert str(tj.make_ir(np_fn)(X)) == str(tj.make_ir(tnp_fn)(X))
    np.testing.assert_allclose(tj.jit(np_fn)(X), np_fn(X), rtol=1e-6)


def test_array_methods_and_attributes():
    def f(x):
        assert x.shape == (3, 4) and x.ndim == 2 and x.size == 12 and x.dtype == np.float32
        return x.T.sum(axis=0) + x.mean() + x.max(axis=1) - x.min()

    np.testing.assert_allclose(
        tj.jit(f)(X), X.T.sum(axis=0) + X.mean() + X.max(axis=1) - X.min(), rtol=1e-6
    )


def test_operators_match_numpy():
    y = X[::-1].copy()
    ops = [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a**b,
        lambda a, b: -a,
        lambda a, b: abs(a - b),
        lambda a, b: a < b,
        lambda a, b: a >= b,
        lambda a, b: a == b,
        lambda a, b: a != b,
        lambda a, b: 2.0 - a,
        lambda a, b: 3 / a,
        lambda a, b: 2**a,
    ]
    for op in ops:
        got, want = tj.jit(op)(X, y), op(X, y)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_integer_operators_match_numpy():
    a = np.array([-7, -3, 0, 5, 9], np.int32)
    b = np.array([2, -4, 3, -5, 4], np.int32)
    for op in (
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a & b,
        lambda a, b: a | b,
        lambda a, b: a ^ b,
        lambda a, b: ~a,
        lambda a, b: a << 2,
        lambda a, b: a >> 1,
    ):
        got, want = tj.jit(op)(a, b), op(a, b)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_unsupported_ufunc_method_is_named():
    with pytest.raises(tj.errors.UnsupportedError, match=r"np\.add\.outer"):
        tj.jit(lambda x: np.add.outer(x, x))(np.ones(2))
