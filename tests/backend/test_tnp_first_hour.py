"""The first-hour failures of issue 12, each as a regression test: what a new user porting
NumPy or JAX code tries first (functional updates on created arrays, constant tables indexed by
traced values, `.copy()`, `.at[].multiply`, the einsum operand-list form, clear errors)."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ConcretizationError, ImmutableArrayError, UnsupportedError


def test_zeros_inside_jit_takes_functional_updates(device):
    @tj.jit(device=device)
    def hist(idx, v):
        return tnp.zeros(5).at[idx].add(v), tnp.ones(5).at[idx].set(v), tnp.zeros(3).at[1].add(2.0)

    idx, v = np.array([1, 3, 1]), np.array([0.5, 2.0, 4.0])
    added, put, const = (np.asarray(tj.device_get(o)) for o in hist(idx, v))
    expected = np.zeros(5)
    np.add.at(expected, idx, v)
    np.testing.assert_array_equal(added, expected)
    np.testing.assert_array_equal(put[[0, 2, 3, 4]], [1.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(const, [0.0, 2.0, 0.0])


def test_asarray_of_a_numpy_table_takes_a_traced_index(device):
    table = np.arange(10.0) ** 2

    @tj.jit(device=device)
    def lookup(i, j):
        t = tnp.asarray(table)
        return t[i], t[j], tnp.arange(10)[i]

    a, b, c = (np.asarray(tj.device_get(o)) for o in lookup(np.int64(3), np.array([[1, 9]])))
    assert a == 9.0 and c == 3
    np.testing.assert_array_equal(b, [[1.0, 81.0]])


def test_numpy_array_indexed_by_a_tracer_says_what_to_do():
    table = np.arange(4.0)
    with pytest.raises(ConcretizationError, match=r"tnp\.asarray\(a\)\[i\]"):
        tj.jit(lambda i: table[i])(np.int64(1))


def test_item_assignment_is_a_type_error_pointing_to_at():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(ImmutableArrayError, match=r"\.at\[i\]\.set") as info:
        tj.jit(f)(np.zeros(2))
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("how", ["multiply", "divide", "min", "max"])
def test_at_combining_updates_match_numpy_ufunc_at(device, how):
    x = np.array([4.0, -1.0, 2.5, 3.0, 0.5])
    idx = np.array([0, 2, 0, 4, 2])
    v = np.array([2.0, 0.5, -3.0, 1.5, 7.0])
    expected = x.copy()
    ufunc = {"multiply": np.multiply, "divide": np.divide, "min": np.minimum, "max": np.maximum}
    ufunc[how].at(expected, idx, v)

    def f(x, i, v):  # traced positions (compared all-to-all) and static ones (grouped)
        return getattr(x.at[i], how)(v), getattr(x.at[idx], how)(v)

    for got in tj.jit(f, device=device)(x, idx, v):
        np.testing.assert_allclose(np.asarray(tj.device_get(got)), expected, rtol=1e-12)
    eager = getattr(tnp.asarray(x).at[idx], how)(v)
    np.testing.assert_allclose(eager, expected, rtol=1e-12)


def test_at_multiply_gradient_matches_finite_differences():
    from _finite_diff import numeric_grad

    idx = np.array([0, 0, 2])

    def loss(m, x, v):
        if m is np:
            y = x.copy()
            np.multiply.at(y, idx, v)
            return np.sum(y * np.arange(1.0, 5.0))
        return tnp.sum(tnp.asarray(x).at[idx].multiply(v) * np.arange(1.0, 5.0))

    x, v = np.array([1.5, -2.0, 0.5, 3.0]), np.array([2.0, -0.5, 4.0])
    gx, gv = tj.grad(lambda x, v: loss(tnp, x, v), argnums=(0, 1))(x, v)
    np.testing.assert_allclose(gx, numeric_grad(lambda a: loss(np, a, v), x), rtol=1e-6)
    np.testing.assert_allclose(gv, numeric_grad(lambda b: loss(np, x, b), v), rtol=1e-6)


def test_traced_array_methods():
    x = np.arange(6.0).reshape(2, 3) - 2.5

    @tj.jit
    def f(x):
        return (x.copy(), x.cumprod(axis=1), x.ptp(axis=0), x.sort(axis=0), x.argsort(),
                x.diagonal(), x.trace(), x.conj(), x.real, x.imag)  # fmt: skip

    expected = (x, x.cumprod(axis=1), np.ptp(x, axis=0), np.sort(x, axis=0), x.argsort(),
                x.diagonal(), x.trace(), x, x, np.zeros_like(x))  # fmt: skip
    for g, e in zip(f(x), expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_einsum_operand_list_form_and_errors():
    a, b = np.ones((2, 3)), np.arange(3.0)
    np.testing.assert_array_equal(
        tnp.einsum(a, [0, 1], b, [1], [0]), np.einsum(a, [0, 1], b, [1], [0])
    )
    np.testing.assert_array_equal(tj.jit(lambda a, b: tnp.einsum(a, [..., 1], b, [1]))(a, b),
                                  np.einsum(a, [..., 1], b, [1]))  # fmt: skip
    with pytest.raises(ValueError, match="operand-list form"):
        tnp.einsum(a, ["i", "j"])


def test_numpy_functions_on_tracers_dispatch_to_the_new_names():
    x = np.array([3.0, 1.0, 2.0, 5.0])
    got = tj.jit(lambda x: (np.sort(x), np.median(x), np.diff(x), np.logaddexp(x, 1.0)))(x)
    expected = (np.sort(x), np.median(x), np.diff(x), np.logaddexp(x, 1.0))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    with pytest.raises(UnsupportedError, match="array_repr"):
        tj.jit(lambda x: np.array_repr(x))(x)  # NumPy's own function: no endless dispatch


def test_ndarray_matches_arrays_and_tracers():
    assert isinstance(np.ones(2), tnp.ndarray) and not isinstance([1.0], tnp.ndarray)
    tj.jit(lambda x: x if isinstance(x, tnp.ndarray) else None)(np.ones(2))


def test_clear_errors_for_data_dependent_sizes():
    with pytest.raises(UnsupportedError, match="length="):
        tj.jit(lambda i: tnp.bincount(i))(np.array([1, 2]))
    with pytest.raises(ConcretizationError):
        tj.jit(lambda x, q: tnp.quantile(x, q))(np.ones(3), np.float64(0.5))
    with pytest.raises(UnsupportedError, match="mode='linear_ramp'"):
        tnp.pad(np.ones(2), 1, mode="linear_ramp")


def test_set_operations_pad_to_size_under_jit():
    a, b = np.array([3, 1, 2, 3]), np.array([3, 4])
    got = tj.jit(lambda a, b: tnp.setdiff1d(a, b, size=4, fill_value=-1))(a, b)
    np.testing.assert_array_equal(got, [1, 2, -1, -1])
    got = tj.jit(lambda a: tnp.nonzero(a, size=4, fill_value=9))(np.array([0, 5, 0, 6]))
    np.testing.assert_array_equal(got[0], [1, 3, 9, 9])
    with pytest.raises(UnsupportedError, match="size="):
        tj.jit(lambda a: tnp.unique(a))(a)
    with pytest.raises(UnsupportedError, match="data-dependent size"):
        tj.jit(lambda a: tnp.trim_zeros(a))(a)
    assert tnp.trim_zeros(np.array([0, 1, 0])).tolist() == [1]
