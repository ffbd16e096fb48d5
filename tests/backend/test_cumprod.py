"""cumprod / nancumprod / cumsum: the scan primitives give NumPy's bits on every device.

NumPy's `accumulate` multiplies (adds) in sequence along the axis; the `cumprod` and `cumsum`
kernels (backend_cpu/gather.py, backend_cuda/gather.py) do the same, so every rounding,
overflow, infinity, NaN and signed zero is NumPy's: compared bit for bit (any NaN matches any
NaN: its payload is the hardware's). Gradients (the VJP of a log-depth scan, exact with zeros)
against float64 central differences, first and second order.
"""

from __future__ import annotations

import numpy as np
import pytest
from _bits import assert_same_bits
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError, TracejitTypeError, UnsupportedError

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.complex64, np.complex128]


def _scans(m, x):
    """Every axis form in one program (one compile): None, first, negative, middle, dtype=."""
    return (
        m.cumprod(x),
        m.cumprod(x, axis=0),
        m.cumprod(x, axis=-1),
        m.cumprod(x, axis=1, dtype=x.dtype),
        m.nancumprod(x, axis=1),
        m.cumsum(x, axis=-1),
    )


def _random(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        low = 0 if dt.kind == "u" else -3
        return rng.integers(low, 4, shape).astype(dt)  # long rows wrap, as NumPy's
    mag = np.exp(rng.normal(size=shape) * 0.4) * rng.choice([-1.0, 1.0], shape)
    if dt.kind == "c":
        mag = mag * np.exp(1j * rng.uniform(0, 2 * np.pi, shape))
    return mag.astype(dt)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scans_match_numpy_bit_for_bit(device, dtype):
    # (10, 40, 3): axis -1 scans 400 rows (several groups of 8), axis 0 / 1 scan columns
    x = _random(dtype, (10, 40, 3), np.random.default_rng(0))
    got = tj.jit(lambda x: _scans(tnp, x), device=device)(x)
    for g, w in zip(got, _scans(np, x)):
        assert_same_bits(g, w)


def test_special_values_keep_numpy_order(device):
    inf, nan = np.inf, np.nan
    real = np.array(
        [
            [1e300, 1e10, 1e-300, 2.0, -0.0, 3.0],  # overflow stays inf: 1e10 was the bug
            [-0.0, -1.0, 5.0, inf, 0.5, -2.0],  # signed zeros, then 0 * inf = nan
            [nan, 2.0, 3.0, -inf, 1e-200, 1e-200],  # nan spreads; underflow to -0.0
            [3.0, -inf, -inf, 1e-310, 1e-10, 7.0],  # subnormals
        ]
    )
    cplx = np.array(
        [
            [inf + 0j, 1 + 0j, 1 + 0j, 2 - 1j],  # (inf + 0j)(1 + 0j) = inf + nanj in NumPy
            [1 + 1j, inf + 1j, 0.5 - 2j, 1 + 0j],
            [nan + 0j, 2 - 1j, 1 + 1j, 3 + 0j],
            [1e200 + 1e200j, 1e200 - 1e200j, 1e-300 + 0j, -0.0 + 0j],
        ]
    )
    fun = lambda m, r, z: (m.cumprod(r, axis=1), m.cumprod(r, axis=0), m.cumprod(z, axis=1),
                           m.cumprod(z, axis=0), m.nancumprod(r, axis=1), m.nancumprod(z, axis=1),
                           m.cumprod(r.astype(np.float32), axis=1),
                           m.cumprod(r > 0, axis=1, dtype=bool), m.cumprod(r > 0, axis=0))  # fmt: skip
    got = tj.jit(lambda r, z: fun(tnp, r, z), device=device)(real, cplx)
    with np.errstate(all="ignore"):
        want = fun(np, real, cplx)
    for g, w in zip(got, want):
        assert_same_bits(g, w)


def test_size_zero_and_one_axes(device):
    fun = lambda m, a, b, s: (m.cumprod(a, axis=1), m.cumprod(a, axis=0), m.cumprod(b, axis=1),
                              m.cumprod(b), m.cumprod(s), m.cumprod(s, axis=0))  # fmt: skip
    a, b = np.ones((3, 0), np.float64), np.array([[2.5], [-1.5]], np.float32)
    s = np.float64(-3.0)
    for g, w in zip(tj.jit(lambda *xs: fun(tnp, *xs), device=device)(a, b, s), fun(np, a, b, s)):
        assert_same_bits(g, w)


def test_cumprod_is_a_native_kernel_and_batches():
    x = _random(np.complex128, (4, 9), np.random.default_rng(1))
    jitted = tj.jit(lambda x: tnp.cumprod(x, axis=1), device="cpu")
    assert jitted.lower(x).compile().executable.fallbacks() == []
    assert_same_bits(jitted(x), np.cumprod(x, axis=1))
    batched = tj.jit(tj.vmap(lambda r: tnp.cumprod(r, axis=0), in_axes=1), device="cpu")(x)
    assert_same_bits(batched, np.cumprod(x, axis=0).T)
    assert_same_bits(tj.jit(tnp.cumprod, device="numpy")(x), np.cumprod(x))  # the reference


def _loss(x, w):
    return tnp.sum(tnp.cumprod(x, axis=1) * w)


@pytest.mark.parametrize("zeros", [0, 1, 2], ids=["no-zero", "one-zero", "two-zeros"])
def test_gradients_match_finite_differences(zeros):
    rng = np.random.default_rng(zeros)
    x = rng.uniform(0.5, 1.5, (2, 7)) * rng.choice([-1.0, 1.0], (2, 7))
    x[0, [3, 5][:zeros]] = 0.0  # the log-depth VJP multiplies only: exact through zeros
    w = rng.normal(size=(2, 7))
    grad = tj.jit(tj.grad(_loss), device="cpu")
    want = numeric_grad(lambda v: float(np.sum(np.cumprod(v, axis=1) * w)), x)
    np.testing.assert_allclose(grad(x, w), want, rtol=1e-7, atol=1e-8)
    # second order: the gradient of <grad, v> is the Hessian times v
    v = rng.normal(size=x.shape)
    hvp = tj.jit(tj.grad(lambda x, w: tnp.sum(tj.grad(_loss)(x, w) * v)), device="cpu")
    want2 = numeric_grad(lambda y: float(np.sum(np.asarray(grad(y, w)) * v)), x, eps=1e-5)
    np.testing.assert_allclose(hvp(x, w), want2, rtol=1e-6, atol=1e-7)


def test_complex_gradient_follows_jax_convention():
    # tj.grad of a real f of z = x + iy is df/dx - i df/dy (docs/sharp-bits.md)
    rng = np.random.default_rng(3)
    z = rng.normal(size=6) + 1j * rng.normal(size=6)
    z[2] = 0.0
    w = rng.normal(size=6) + 1j * rng.normal(size=6)
    loss = lambda m, z: m.sum(m.real(m.cumprod(z) * w))
    got = tj.jit(tj.grad(lambda z: loss(tnp, z)), device="cpu")(z)
    dx = numeric_grad(lambda x: float(loss(np, x + 1j * z.imag)), z.real)
    dy = numeric_grad(lambda y: float(loss(np, z.real + 1j * y)), z.imag)
    np.testing.assert_allclose(got, dx - 1j * dy, rtol=1e-7, atol=1e-8)


def test_cumulative_of_a_0d_array_axis_types_and_out(device):
    # NumPy 2: cumulative_sum/prod need axis only above rank 1; a 0-d array scans as (1,)
    # (tracejit raised 'pass axis=' for rank 0, and padded a (1,) result with 0-d widths)
    s = np.float64(-3.0)
    fun = lambda m, s: (m.cumulative_prod(s), m.cumulative_sum(s, include_initial=True),
                        m.cumulative_prod(s, axis=0, include_initial=True),
                        m.cumulative_sum(s > 0, axis=-1, include_initial=True))  # fmt: skip
    for g, w in zip(tj.jit(lambda s: fun(tnp, s), device=device)(s), fun(np, s)):
        assert_same_bits(g, w)
    x = np.ones((2, 3))
    for axis in (1.5, np.float64(1.0), (0, 1)):  # int() made 1.5 axis 1; a tuple raised raw
        with pytest.raises(TracejitTypeError, match="axis must be an integer"):
            tnp.cumprod(x, axis=axis)
    with pytest.raises(ShapeError, match="rank 2"):
        tnp.cumulative_prod(x)
    for scan in (tnp.cumsum, tnp.cumprod, tnp.nancumsum, tnp.nancumprod):  # raw TypeError
        with pytest.raises(UnsupportedError, match=r"out=\.\.\."):
            scan(x, out=np.empty(6))
