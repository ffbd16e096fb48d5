"""tracejit.numpy.fft's transforms against np.fft (lengths cropped and padded, axes, every
norm), eagerly and compiled on the test device, and their gradients (JAX's convention for
complex inputs: df/dx - i df/dy) against float64 central differences."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

RNG = np.random.default_rng(3)
R3 = RNG.standard_normal((3, 4, 6))
C3 = RNG.standard_normal((3, 4, 6)) + 1j * RNG.standard_normal((3, 4, 6))

CASES = [
    ("fft", lambda m, x: m.fft.fft(x), C3),
    ("fft", lambda m, x: m.fft.fft(x, n=4, axis=1, norm="ortho"), R3),
    ("fft", lambda m, x: m.fft.fft(x, n=9, axis=0, norm="forward"), C3),
    ("ifft", lambda m, x: m.fft.ifft(x, n=5), C3),
    ("ifft", lambda m, x: m.fft.ifft(x, axis=0, norm="ortho"), C3),
    ("rfft", lambda m, x: m.fft.rfft(x), R3),
    ("rfft", lambda m, x: m.fft.rfft(x, n=7, axis=1, norm="forward"), R3),
    ("irfft", lambda m, x: m.fft.irfft(x), C3),
    ("irfft", lambda m, x: m.fft.irfft(x, n=5, axis=1, norm="ortho"), C3),
    ("hfft", lambda m, x: m.fft.hfft(x, n=7), C3),
    ("ihfft", lambda m, x: m.fft.ihfft(x, norm="ortho"), R3),
    ("fft2", lambda m, x: m.fft.fft2(x), C3),
    ("ifft2", lambda m, x: m.fft.ifft2(x, s=(3, 8)), C3),
    ("rfft2", lambda m, x: m.fft.rfft2(x, axes=(0, 2)), R3),
    ("irfft2", lambda m, x: m.fft.irfft2(x, s=(4, 7), norm="forward"), C3),
    ("fftn", lambda m, x: m.fft.fftn(x), C3),
    ("ifftn", lambda m, x: m.fft.ifftn(x, axes=(2, 0)), C3),
    ("rfftn", lambda m, x: m.fft.rfftn(x, s=(5, 4), axes=(1, 2)), R3),
    ("irfftn", lambda m, x: m.fft.irfftn(x), C3),
    ("fft-f32", lambda m, x: m.fft.rfft(x.astype(np.float32)), R3),
]
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(CASES)]


def _check(got, want, name):
    got = np.asarray(tj.device_get(got))
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, want.dtype)
    tol = 1e-5 if want.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_transforms_match_numpy(case):
    name, fn, x = case
    _check(fn(tnp, x), fn(np, x), name)


def test_transforms_compiled_on_the_test_device(device):
    fns = [fn for _, fn, _ in CASES]
    got = tj.jit(lambda xs: [f(tnp, x) for f, x in zip(fns, xs)], device=device)(
        [x for _, _, x in CASES]
    )
    for (name, fn, x), g in zip(CASES, got, strict=True):
        _check(g, fn(np, x), name)


def _loss(m, fn, x, w):
    out = fn(m, x)
    if np.iscomplexobj(w):
        return m.sum(m.real(out) * w.real + m.imag(out) * w.imag)
    return m.sum(out * w)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "fft-f32"], ids=IDS[:-1])
def test_gradients_match_finite_differences(case):
    name, fn, x = case
    x = x[:2, :3]  # small: finite differences cost two evaluations per element
    want_out = fn(np, x)
    w = RNG.uniform(0.5, 1.5, want_out.shape)
    if np.iscomplexobj(want_out):
        w = w + 1j * RNG.uniform(0.5, 1.5, want_out.shape)
    got = np.asarray(tj.grad(lambda v: _loss(tnp, fn, v, w))(x))
    if np.iscomplexobj(x):  # JAX's convention: df/dx - i df/dy
        dre = numeric_grad(lambda r: float(_loss(np, fn, r + 1j * x.imag, w)), x.real.copy())
        dim = numeric_grad(lambda i: float(_loss(np, fn, x.real + 1j * i, w)), x.imag.copy())
        want = dre - 1j * dim
    else:
        want = numeric_grad(lambda r: float(_loss(np, fn, r, w)), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=name)


def test_compiled_gradient_and_vmap():
    x = R3[0]
    w = RNG.uniform(0.5, 1.5, (4, 4))

    def loss(v):
        return tnp.sum(tnp.abs(tnp.fft.rfft(v, axis=-1)) ** 2 * w)

    want = numeric_grad(lambda v: float(np.sum(np.abs(np.fft.rfft(v)) ** 2 * w)), x)
    np.testing.assert_allclose(tj.jit(tj.grad(loss))(x), want, rtol=1e-6, atol=1e-6)
    got = tj.vmap(lambda v: tnp.fft.fft(v))(C3)
    np.testing.assert_allclose(got, np.fft.fft(C3), rtol=1e-12, atol=1e-12)


def test_bad_input():
    with pytest.raises(TypeError):
        tnp.fft.rfft(C3)
    with pytest.raises(ValueError):
        tnp.fft.fft(R3, norm="sideways")
    with pytest.raises(ValueError):  # (repeated axes are NumPy's: test_fft_axes.py)
        tnp.fft.fftn(R3, s=(4,), axes=(0, 0))
    with pytest.raises(ValueError):
        tnp.fft.fft(R3, n=0)


def test_a_normalization_is_applied_inside_the_transform():
    """As NumPy's: a forward-normed ifft is the unnormalized inverse, not an ifft scaled by
    1/N and multiplied back by N, which flushed these float32 subnormals to zero. On the CPU
    (the library the compiled program calls); whether cuFFT keeps subnormals is its own."""
    tiny = np.array([-0.0, -1.4e-45], np.float32).astype(np.complex64)
    quarter = np.array([1e-45, 3e-45, 0.0, 0.0], np.float32).astype(np.complex64)
    for x, norm in ((tiny, "forward"), (quarter, "ortho"), (quarter, "forward")):
        got = tj.device_get(tj.jit(lambda v, norm=norm: tnp.fft.ifft(v, norm=norm))(x))
        want = np.fft.ifft(x, norm=norm)
        assert want[1] != 0  # the subnormal NumPy keeps
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
