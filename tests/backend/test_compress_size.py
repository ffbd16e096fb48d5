"""`compress` and `extract` with a traced condition take `size=` and `fill_value=` (JAX's
form), on every device; without `size` a traced condition is a clear error, and a static one
gives NumPy's own selection."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError, UnsupportedError

A = np.arange(12.0).reshape(3, 4)


def _padded(selected, size, fill, axis):
    """NumPy's selection cut or padded with `fill` to `size` along `axis`."""
    selected = np.moveaxis(selected, axis, 0)[:size]
    pad = np.full((size - selected.shape[0],) + selected.shape[1:], fill, selected.dtype)
    return np.moveaxis(np.concatenate([selected, pad]), 0, axis)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("size", [1, 2, 5])
def test_compress_with_a_traced_condition(device, axis, size):
    cond = np.array([1, 0, 1])
    f = tj.jit(
        lambda c, a: tnp.compress(c, a, axis=axis, size=size, fill_value=-1.0), device=device
    )
    want = _padded(np.compress(cond, A, axis=axis), size, -1.0, 0 if axis is None else axis)
    np.testing.assert_array_equal(tj.device_get(f(cond, A)), want)


def test_extract_and_errors(device):
    f = tj.jit(lambda c, a: tnp.extract(c, a, size=8), device=device)
    np.testing.assert_array_equal(
        tj.device_get(f(A > 6, A)), _padded(np.extract(A > 6, A), 8, 0.0, 0)
    )
    with pytest.raises(UnsupportedError, match="compress of a traced array.*size="):
        tj.jit(lambda c, a: tnp.compress(c, a))(np.array([1, 0]), A)
    with pytest.raises(ShapeError, match="condition of length 5"):
        tj.jit(lambda c, a: tnp.compress(c, a, axis=0, size=2))(np.ones(5), A)
    np.testing.assert_array_equal(tnp.compress([True, False], A, axis=0), A[:1])  # static


def test_gradient_reaches_the_selected_slices():
    grad = tj.grad(lambda a: tnp.sum(tnp.compress(np.array([1, 0, 1]), a, axis=0, size=2) ** 2))
    np.testing.assert_array_equal(grad(A), 2 * A * np.array([[1], [0], [1]]))
