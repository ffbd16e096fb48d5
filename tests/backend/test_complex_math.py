"""Complex elementary functions and NumPy's complex order (tracejit/numpy/_complex_math.py,
_complex_order.py), compiled on the test device: values against NumPy within a few ulp of
|result| (norm-wise: max(|d re|, |d im|) <= K eps |w|), special values (signed zeros on the
branch cuts, infinities, NaNs) as NumPy, and gradients against float64 central differences
in JAX's convention (grad of a real f of z = x + iy is df/dx - i df/dy)."""

from __future__ import annotations

import warnings

import numpy as np
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

UNARY = ["sqrt", "log", "log10", "log2", "exp", "exp2", "expm1", "sin", "cos", "tan", "sinh",
         "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
         "reciprocal", "sign", "square"]  # fmt: skip
ULPS = 8  # measured worst case on 4,000 draws: 6 (expm1's cancellation), most below 3


def _draws(dt, n=400, seed=0):
    rng = np.random.default_rng(seed)
    mag, phase = np.exp(rng.uniform(-5, 3, n)), rng.uniform(-np.pi, np.pi, n)
    return (mag * np.exp(1j * phase)).astype(dt)


def _ulps(got, want, dt):
    eps = np.finfo(np.finfo(dt).dtype).eps
    return np.abs(np.asarray(got) - want) / (eps * np.abs(want))


def test_unary_functions_match_numpy(device):
    zs = [_draws(np.complex128), _draws(np.complex64, seed=1)]
    got = tj.jit(lambda zs: [{n: getattr(tnp, n)(z) for n in UNARY} for z in zs], device=device)(zs)
    for z, out in zip(zs, got):
        for name in UNARY:
            want = getattr(np, name)(z)
            g = np.asarray(tj.device_get(out[name]))
            assert g.dtype == want.dtype, name
            assert _ulps(g, want, z.dtype).max() <= ULPS, (name, z.dtype)


def test_log1p_is_accurate_for_small_arguments(device):
    # NumPy's log(hypot(1 + x, y)) loses the low digits of small z: the reference is
    # log|1 + z| = log1p(2x + x**2 + y**2) / 2 and arg(1 + z) in long double
    z = _draws(np.complex128) * 1e-3
    got = np.asarray(tj.device_get(tj.jit(tnp.log1p, device=device)(z)))
    x, y = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    want = np.log1p(2 * x + x * x + y * y) / 2 + 1j * np.arctan2(y, 1 + x)
    assert _ulps(got, want, np.complex128).max() <= 4


SPECIAL = np.array([0j, complex(0, -0.0), complex(-0.0, 0), complex(-4, 0), complex(-4, -0.0),
                    complex(-1, -0.0), 1 + 0j, complex(np.inf, 1), complex(-np.inf, 1),
                    complex(1, np.inf), complex(np.nan, 1), complex(2, np.nan)])  # fmt: skip


def test_special_values_as_numpy(device):
    names = ["sqrt", "log", "exp", "sign"]
    got = tj.jit(lambda z: [getattr(tnp, n)(z) for n in names], device=device)(SPECIAL)
    for name, g in zip(names, got):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(SPECIAL)
        g = np.asarray(tj.device_get(g))
        for part in (np.real, np.imag):  # signs of zeros included (a NaN's sign means nothing)
            gp, wp = part(g), part(want)
            number = ~np.isnan(wp)
            np.testing.assert_array_equal(np.signbit(gp)[number], np.signbit(wp)[number], name)
            finite = np.isfinite(wp)
            np.testing.assert_array_equal(gp[~finite], wp[~finite], name)
            np.testing.assert_allclose(gp[finite], wp[finite], rtol=4.5e-16, atol=0, err_msg=name)


BRANCH_CUTS = np.array([complex(2, 0.0), complex(2, -0.0), complex(-2, 0.0), complex(-2, -0.0),
                        complex(0.0, 2), complex(-0.0, 2), complex(0.0, -2), complex(-0.0, -2),
                        complex(0.5, -0.0), complex(1e-9, 1e-9)])  # fmt: skip
INVERSE = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sqrt", "log"]


def test_branch_cuts_follow_the_sign_of_zero(device):
    got = tj.jit(lambda z: [getattr(tnp, n)(z) for n in INVERSE], device=device)(BRANCH_CUTS)
    for name, g in zip(INVERSE, got):
        want = getattr(np, name)(BRANCH_CUTS)
        assert _ulps(np.asarray(tj.device_get(g)), want, np.complex128).max() <= 4, name


def test_grad_of_fft_of_a_real_input_warns_nothing():
    # the VJP of real -> complex convert takes the real part explicitly (no ComplexWarning)
    x = np.linspace(0.0, 1.0, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tj.grad(lambda x: tnp.sum(tnp.abs(tnp.fft.fft(x)) ** 2))(x)
    np.testing.assert_allclose(g, 2 * len(x) * x, atol=1e-12)  # Parseval: n sum x**2


def test_power_and_prod(device):
    z = _draws(np.complex128, 60, seed=1)
    w = _draws(np.complex128, 60, seed=2) * 0.3

    def f(z, w):
        return [tnp.power(z, 2), tnp.power(z, -3), z**7, tnp.power(z, 0.5), tnp.power(z, w),
                tnp.prod(z[:40]), tnp.prod(z[:36].reshape(6, 6), axis=0), tnp.float_power(z, 2.5)]  # fmt: skip

    got = [np.asarray(tj.device_get(g)) for g in tj.jit(f, device=device)(z, w)]
    with np.errstate(all="ignore"):
        want = [np.power(z, 2), np.power(z, -3), z**7, np.power(z, 0.5), np.power(z, w),
                np.prod(z[:40]), np.prod(z[:36].reshape(6, 6), axis=0), np.float_power(z, 2.5)]  # fmt: skip
    # small integer exponents multiply in NumPy's order (NumPy's SIMD loops may fuse a
    # multiply-add: an ulp or two), exp(w log z) carries log's error times |w log z| (glibc's
    # cpow is the same formula), prod multiplies in another order
    for g, v in zip(got[:3], want[:3]):
        assert _ulps(g, v, np.complex128).max() <= 4
    cond = 1 + np.abs(w * np.log(z))
    assert (_ulps(got[4], want[4], np.complex128) <= 4 * cond).all()
    for i in (3, 5, 6, 7):
        assert got[i].dtype == want[i].dtype == np.complex128
        assert _ulps(got[i], want[i], np.complex128).max() <= 16, i


def test_order_as_numpy(device):
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j, 2 + np.nan * 1j, 0.5 + 7j, -3 - 1j])
    clean = z[[0, 1, 2, 3, 5, 6]]
    b = clean[::-1]

    def f(z, clean, b):
        return [tnp.sort(z), tnp.argsort(z), tnp.max(clean), tnp.min(clean), tnp.argmax(clean),
                tnp.argmin(clean), tnp.max(z), tnp.argmax(z), tnp.maximum(clean, b),
                tnp.minimum(z[:6], clean), clean < b, clean <= b, clean > b, clean >= b,
                tnp.max(clean.reshape(2, 3), axis=1), tnp.round(clean * 1.37, 1)]  # fmt: skip

    got = [np.asarray(tj.device_get(g)) for g in tj.jit(f, device=device)(z, clean, b)]
    want = [np.sort(z), np.argsort(z, kind="stable"), np.max(clean), np.min(clean),
            np.argmax(clean), np.argmin(clean), np.max(z), np.argmax(z), np.maximum(clean, b),
            np.minimum(z[:6], clean), clean < b, clean <= b, clean > b, clean >= b,
            np.max(clean.reshape(2, 3), axis=1), np.round(clean * 1.37, 1)]  # fmt: skip
    for i, (g, v) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, v, err_msg=str(i))


def _wirtinger_fd(f, z):
    """df/dx - i df/dy of a real-valued f at complex z, by central differences in float64."""
    dx = numeric_grad(lambda x: f(x + 1j * z.imag), z.real)
    dy = numeric_grad(lambda y: f(z.real + 1j * y), z.imag)
    return dx - 1j * dy


GRADS = UNARY[:-1] + ["power", "prod", "max", "sort"]


def _loss(xp, name, z):
    """A real loss mixing both parts of the function's value."""
    if name == "power":
        out = xp.power(z, 1.5 - 0.5j)
    elif name in ("prod", "max"):
        out = getattr(xp, name)(z)
    elif name == "sort":
        out = xp.sort(z) * xp.arange(1, 5)
    else:
        out = getattr(xp, name)(z)
    return xp.sum(xp.real(out) * 0.7 + xp.imag(out) * 1.3)


def test_gradients_follow_jax_convention(device):
    # the graphs are the device's; the emulator (slow) runs a sample of them
    names = GRADS if device == "cpu" else ["sqrt", "tanh", "arccos", "power", "prod", "max"]
    z = np.array([0.8 + 0.6j, -0.5 + 1.2j, 1.5 - 0.4j, 0.3 - 0.9j])

    def grads(z):
        return {n: tj.grad(lambda z, n=n: _loss(tnp, n, z))(z) for n in names}

    got = tj.jit(grads, device=device)(z)
    for name in names:
        want = _wirtinger_fd(lambda v, n=name: _loss(np, n, v), z)
        g = np.asarray(tj.device_get(got[name]))
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7, err_msg=name)
