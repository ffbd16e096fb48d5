"""The `fft` primitive over axes where they are (`axes`, ir/fft_prims.py), not moved to the end
by transposes: values against np.fft compiled on the test device (single precision, reversed
operands, size-1 axes), under vmap with the batch axis anywhere, gradients against float64
central differences, and a clear error for bad axes. Repeated axes transform that axis again,
as NumPy documents (`fftn(x, axes=(0, 0))`), with `s` too."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError, TracejitValueError
from tracejit.tracer.core import bind

RNG = np.random.default_rng(11)
C = RNG.standard_normal((5, 1, 6)) + 1j * RNG.standard_normal((5, 1, 6))
R = RNG.standard_normal((6, 3, 5))

CASES = [  # (name, fn(module, x), operand): every kind on a leading or middle axis
    ("fft-axis0", lambda m, x: m.fft.fft(x, axis=0), C),
    ("ifft-axis1-size1", lambda m, x: m.fft.ifft(x, axis=1), C),
    ("fft2-axes02-reversed", lambda m, x: m.fft.fft2(x[::-1], axes=(0, 2)), C),
    ("rfft-axis0", lambda m, x: m.fft.rfft(x, axis=0), R),
    ("rfftn-axes10", lambda m, x: m.fft.rfftn(x, axes=(1, 0), norm="ortho"), R),
    ("irfft-axis0-n", lambda m, x: m.fft.irfft(x, n=7, axis=0), C),
    ("irfftn-axes20", lambda m, x: m.fft.irfftn(x, s=(4, 5), axes=(2, 0)), C),
    ("rfft-axis1-f32", lambda m, x: m.fft.rfft(x.astype(np.float32), axis=1), R),
    ("fft-axis0-c64", lambda m, x: m.fft.fft(x.astype(np.complex64), axis=0), C),
]
IDS = [c[0] for c in CASES]


def _close(got, want, name):
    got = np.asarray(tj.device_get(got))
    assert got.dtype == want.dtype and got.shape == want.shape, name
    tol = 2e-5 if want.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10, err_msg=name)


def test_compiled_on_the_test_device(device):
    got = tj.jit(lambda xs: [f(tnp, x) for (_, f, _), x in zip(CASES, xs)], device=device)(
        [x for _, _, x in CASES]
    )
    for (name, fn, x), g in zip(CASES, got, strict=True):
        _close(g, fn(np, x), name)


def test_no_transpose_moves_the_axes():
    graph = str(tj.make_ir(lambda x: tnp.fft.fft(x, axis=0))(C))
    assert "fft[" in graph and "transpose" not in graph


def test_vmap_with_the_batch_axis_anywhere():
    for in_axis in (0, 1, 2):
        got = tj.vmap(lambda v: tnp.fft.rfft(v, axis=0), in_axes=in_axis)(R)
        want = np.stack(
            [np.fft.rfft(np.take(R, i, in_axis), axis=0) for i in range(R.shape[in_axis])]
        )
        _close(got, want, f"in_axes={in_axis}")


@pytest.mark.parametrize("case", [c for c in CASES if "32" not in c[0] and "64" not in c[0]],
                         ids=[i for i in IDS if "32" not in i and "64" not in i])  # fmt: skip
def test_gradients_match_finite_differences(case):
    name, fn, x = case
    want_out = fn(np, x)
    w = RNG.uniform(0.5, 1.5, want_out.shape) * (1 + 0.5j if np.iscomplexobj(want_out) else 1)

    def loss(m, v):
        out = fn(m, v)
        return m.sum(m.real(out) * w.real + m.imag(out) * w.imag)

    got = np.asarray(tj.jit(tj.grad(lambda v: loss(tnp, v)))(x))
    if np.iscomplexobj(x):  # JAX's convention: df/dx - i df/dy
        dre = numeric_grad(lambda r: float(loss(np, r + 1j * x.imag)), x.real.copy())
        dim = numeric_grad(lambda i: float(loss(np, x.real + 1j * i)), x.imag.copy())
        want = dre - 1j * dim
    else:
        want = numeric_grad(lambda r: float(loss(np, r)), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("axes", [(-4,), (0,), (-1, -1), (-1, -2, -3)])
def test_bad_axes_are_a_shape_error(axes):
    with pytest.raises(ShapeError, match="axes"):
        bind("fft", C, kind="fft", lengths=(6,) * len(axes), axes=axes)


def test_no_axes_to_transform_is_numpys_identity(device):
    for fn in (lambda m, x: m.fft.fftn(x, axes=()), lambda m, x: m.fft.ifft2(x, axes=())):
        want = fn(np, R)
        for got in (fn(tnp, R), tj.jit(lambda x, fn=fn: fn(tnp, x), device=device)(R)):
            got = np.asarray(tj.device_get(got))
            assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(TracejitValueError, match="needs an axis"):
        tnp.fft.rfftn(R, axes=())


REPEATED = [  # (name, fn(module, x), operand): NumPy transforms a repeated axis again
    ("fftn-00", lambda m, x: m.fft.fftn(x, axes=(0, 0)), C),
    ("fftn-00-s", lambda m, x: m.fft.fftn(x, s=(3, 7), axes=(0, 0)), C),
    (
        "ifftn-202-s-ortho",
        lambda m, x: m.fft.ifftn(x, s=(4, 2, 3), axes=(2, 0, 2), norm="ortho"),
        C,
    ),
    ("fft2-22", lambda m, x: m.fft.fft2(x, axes=(-1, 2)), C),
    ("ifft2-00-c64", lambda m, x: m.fft.ifft2(x.astype(np.complex64), axes=(0, 0)), C),
    ("rfftn-00", lambda m, x: m.fft.rfftn(x, axes=(0, 0)), R),
    ("rfftn-202-forward", lambda m, x: m.fft.rfftn(x, axes=(2, 0, 2), norm="forward"), R),
    ("irfftn-00", lambda m, x: m.fft.irfftn(x, axes=(0, 0)), C),
    ("irfftn-202-s", lambda m, x: m.fft.irfftn(x, s=(4, 3, 6), axes=(2, 0, 2)), C),
]


def test_repeated_axes_as_numpy_on_the_test_device(device):
    xs = [x for _, _, x in REPEATED]
    compiled = tj.jit(lambda xs: [f(tnp, x) for (_, f, _), x in zip(REPEATED, xs)], device=device)
    for (name, fn, x), g in zip(REPEATED, compiled(xs), strict=True):
        want = fn(np, x)
        _close(g, want, name)
        _close(fn(tnp, x), want, f"{name} (eager)")


def test_repeated_axes_gradients_match_finite_differences():
    cases = [c for c in REPEATED if "64" not in c[0]]
    weights = [RNG.uniform(0.5, 1.5, fn(np, x).shape) * (1 + 0.5j) for _, fn, x in cases]

    def loss(m, c, r):  # every case at once: one compiled gradient
        total = 0.0
        for (_, fn, x), w in zip(cases, weights):
            out = fn(m, c if x is C else r)
            total = total + m.sum(m.real(out) * w.real + m.imag(out) * w.imag)
        return total

    got_c, got_r = tj.jit(tj.grad(lambda c, r: loss(tnp, c, r), argnums=(0, 1)))(C, R)
    dre = numeric_grad(lambda v: float(loss(np, v + 1j * C.imag, R)), C.real.copy())
    dim = numeric_grad(lambda v: float(loss(np, C.real + 1j * v, R)), C.imag.copy())
    np.testing.assert_allclose(got_c, dre - 1j * dim, rtol=1e-6, atol=1e-6)  # JAX's convention
    want_r = numeric_grad(lambda v: float(loss(np, C, v)), R.copy())
    np.testing.assert_allclose(got_r, want_r, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.fft.fft2(x, norm="forward"),
        lambda m, x: m.fft.ifftn(x, axes=(1, 2)),
        lambda m, x: m.fft.rfft2(x.real),
        lambda m, x: m.fft.irfft2(x, s=(5, 6)),
        lambda m, x: m.fft.fft(x, axis=1),
    ],
)
def test_transforms_of_no_elements(device, fn):
    # an empty batch (shape (0, 5, 4)): CuPy's n-dimensional fft raised "Invalid number of
    # FFT data points (0)" where NumPy returns an empty result (an H100 gradient campaign)
    x = np.zeros((0, 5, 4), np.complex128)
    want = fn(np, x)
    got = tj.device_get(tj.jit(lambda v: fn(tnp, v), device=device)(x))
    assert got.shape == want.shape and got.dtype == want.dtype
    g = tj.jit(tj.grad(lambda v: tnp.sum(tnp.abs(fn(tnp, v)))), device=device)(x.real)
    assert tj.device_get(g).shape == x.shape
