"""complex64/complex128 compiled on the test device against NumPy, gradients against central
differences in float64 in JAX's convention (grad of a real f of z = x + iy is df/dx - i df/dy),
and var/std of complex values (real, as NumPy's)."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp


def _pair(dt, shape, seed=5):
    rng = np.random.default_rng(seed)
    parts = rng.standard_normal((2, *shape))
    return (parts[0] + 1j * parts[1]).astype(dt)


def _program(xp):
    def f(z, w, idx):
        return {
            "add": z + w,
            "sub": z - w,
            "mul": z * w,
            "div": z / w,
            "neg": -z,
            "eq": z == w,
            "ne": z != w[::-1],
            "abs": xp.abs(z),
            "real": xp.real(z),
            "imag": xp.imag(z),
            "conj": xp.conj(z),
            "angle": xp.angle(z),
            "exp": xp.exp(z * 0.5),
            "sum_axis1": xp.sum(z, axis=1),
            "mean": xp.mean(z),
            "matmul": z @ w.T,
            "to_real": xp.real(z).astype(np.float32),
            "widen": z.astype(np.complex128),
            "where": xp.where(xp.real(z) > 0, z, w),
            "index": z[1:, ::2][idx],
            "scalar": z * 2.0 + 1j,
        }

    return f


# NumPy's exact results: + - neg, comparisons, parts, selections; the rest within a few ulps
EXACT = {"add", "sub", "neg", "eq", "ne", "real", "imag", "conj", "to_real", "widen", "where",
         "index"}  # fmt: skip


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ops_match_numpy(dtype, device):
    z, w = _pair(dtype, (4, 6)), _pair(dtype, (4, 6), seed=6)
    idx = np.array([0, 2, 0])
    got = tj.jit(_program(tnp), device=device)(z, w, idx)
    want = _program(np)(z, w, idx)
    eps = float(np.finfo(dtype).eps)
    for name, ref in want.items():
        g = np.asarray(tj.device_get(got[name]))
        ref = np.asarray(ref)
        assert g.dtype == ref.dtype, (name, g.dtype, ref.dtype)
        if name in EXACT:
            np.testing.assert_array_equal(g, ref, err_msg=name)
        else:
            np.testing.assert_allclose(g, ref, rtol=16 * eps, atol=16 * eps, err_msg=name)


def _wirtinger_fd(f, z):
    """df/dx - i df/dy of a real-valued f at complex z, by central differences in float64."""
    z = np.asarray(z, np.complex128)
    dx = numeric_grad(lambda x: f(x + 1j * z.imag), z.real)
    dy = numeric_grad(lambda y: f(z.real + 1j * y), z.imag)
    return dx - 1j * dy


LOSSES = {
    "abs_squared": (lambda xp, z: xp.sum(xp.abs(z) ** 2)),
    "holomorphic_then_real": (lambda xp, z: xp.sum(xp.real(z * z * (1 + 2j)))),
    "division_and_imag": (lambda xp, z: xp.sum(xp.imag(1.0 / (z + 3.0)))),
    "conj_product": (lambda xp, z: xp.real(xp.sum(z * xp.conj(z[::-1])))),
    "exp_abs": (lambda xp, z: xp.sum(xp.abs(xp.exp(z * 0.5)))),
    "matmul_angle": (lambda xp, z: xp.sum(xp.angle(xp.outer(z, z) @ z + 0.5))),
    "var": (lambda xp, z: xp.var(z * (1 + 2j) + xp.conj(z) ** 2)),
    "std_ddof": (lambda xp, z: xp.std(xp.exp(z * 0.5), ddof=1)),
    "std_axis": (lambda xp, z: xp.sum(xp.reshape(xp.exp(z[:4]), (2, 2)).std(axis=0))),
    "nanvar": (lambda xp, z: xp.nanvar(z * 1j + xp.conj(z) ** 2, ddof=1)),
}


def test_complex_gradients_follow_jax_convention(device):
    z = _pair(np.complex128, (5,), seed=9)

    def grads(z):  # one compiled program for every loss
        return {name: tj.grad(lambda z, fn=fn: fn(tnp, z))(z) for name, fn in LOSSES.items()}

    got = tj.jit(grads, device=device)(z)
    for name, fn in LOSSES.items():
        g = np.asarray(tj.device_get(got[name]))
        assert g.dtype == np.complex128, name
        want = _wirtinger_fd(lambda v, fn=fn: fn(np, v), z)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7, err_msg=name)


def test_jax_documented_example():
    # jax docs/complex-differentiation.md: grad of x**2 + y**2 at 3+4j is 6-8j
    def f(z):
        return tnp.real(z) ** 2 + tnp.imag(z) ** 2

    assert tj.grad(f)(np.complex64(3 + 4j)) == np.complex64(6 - 8j)
    assert tj.jit(tj.grad(f))(np.complex64(3 + 4j)) == np.complex64(6 - 8j)


# (name, keywords): complex var/std are real (|x - mean|**2); a real dtype= drops the
# imaginary part in the mean only, a complex one makes the result complex (NumPy's _var)
VAR_CASES = [
    ("var", {}),
    ("std", {"axis": 1, "ddof": 1}),
    ("var", {"axis": 0, "keepdims": True}),
    ("std", {"dtype": np.complex128}),
    ("var", {"dtype": np.float64}),
    ("std", {"axis": (0, 1), "correction": 2, "keepdims": True}),
    ("var", {"axis": 1, "ddof": 6}),  # n - ddof = 0: inf, as NumPy's
]


def _variances(xp, z):
    out = [getattr(xp, name)(z, **kw) for name, kw in VAR_CASES]
    return out + [z.var(axis=1), z[:, :1].std(axis=1)]  # methods; a size-1 axis


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # NumPy's, for dtype=
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # NumPy's, for ddof=n
@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_var_and_std_match_numpy(dtype, device):
    z = _pair(dtype, (4, 6))
    got = tj.device_get(tj.jit(lambda z: _variances(tnp, z), device=device)(z))
    eager = _variances(tnp, z) if device == "cpu" else got
    eps = float(np.finfo(dtype).eps)
    for i, (ref, g, e) in enumerate(zip(_variances(np, z), got, eager)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == ref.dtype == e.dtype and g.shape == ref.shape, (i, g.dtype, ref.dtype)
        np.testing.assert_allclose(g, ref, rtol=8 * eps, err_msg=str(i))
        np.testing.assert_allclose(e, ref, rtol=8 * eps, err_msg=str(i))


# NaN in either part of a complex value is NaN (np.isnan); nan_to_num treats each part alone
_NAN_Z = np.array([[1 + 1j, complex(np.nan, 0), 2 - 1j, complex(0, np.nan)],
                   [0.5 - 2j, complex(np.inf, np.nan), 3 + 0j, complex(-np.inf, 1)]])  # fmt: skip
NAN_CASES = [("nansum", {}), ("nanmean", {"axis": 1}), ("nanvar", {"axis": 1}),
             ("nanstd", {"ddof": 1}), ("nanprod", {"axis": 0}), ("nancumsum", {"axis": 1}),
             ("nancumprod", {"axis": 0}), ("nanmax", {"axis": 1}), ("nanmin", {}),
             ("nanargmax", {"axis": 1}), ("nanargmin", {}), ("nan_to_num", {}),
             ("nan_to_num", {"nan": 2.0, "posinf": 5.0, "neginf": -5.0})]  # fmt: skip


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, for inf - inf
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_nan_functions_of_complex_values_match_numpy(dtype, device):
    # they gave NaN (or kept the NaNs) silently: isnan of the real dtypes only
    z = _NAN_Z.astype(dtype)

    def run(xp, z):
        return [getattr(xp, name)(z, **kw) for name, kw in NAN_CASES]

    got = tj.device_get(tj.jit(lambda z: run(tnp, z), device=device)(z))
    eager = run(tnp, z) if device == "cpu" else got
    eps = float(np.finfo(dtype).eps)
    for (name, _), ref, g, e in zip(NAN_CASES, run(np, z), got, eager):
        for out in (np.asarray(g), np.asarray(e)):
            assert out.dtype == ref.dtype and out.shape == ref.shape, (name, out.dtype, ref.dtype)
            np.testing.assert_allclose(out, ref, rtol=8 * eps, err_msg=name)


# they conjugated nothing (cov, corrcoef, correlate), or raised (nanmedian)
STATS = {
    "cov": lambda xp, z, w: xp.cov(z),
    "cov_y": lambda xp, z, w: xp.cov(z[0], w[:4], rowvar=True),
    "corrcoef": lambda xp, z, w: xp.corrcoef(z, rowvar=False),
    "correlate": lambda xp, z, w: xp.correlate(z[0], w[:3], "full"),
    "correlate_longer_v": lambda xp, z, w: xp.correlate(z[0], w),
    "nanmedian": lambda xp, z, w: xp.nanmedian(xp.where(xp.abs(z) > 2, np.nan, z), axis=1),
    "median": lambda xp, z, w: xp.median(z, axis=0),
    "rint": lambda xp, z, w: xp.rint(z * 3),  # each part, half to even
    "vecmat": lambda xp, z, w: xp.vecmat(w[:3], z),  # conj(w) @ z
    "max_initial": lambda xp, z, w: xp.max(z, axis=1, where=z.real > 0, initial=-1j),
    "unique_nans": lambda xp, z, w: xp.unique(  # every NaN-holding value is one NaN
        xp.concatenate([z[0], z[0], _NAN_Z[0]]), **({} if xp is np else {"size": 7})
    ),
}


def test_statistics_of_complex_values_match_numpy(device):
    z, w = _pair(np.complex128, (3, 4)), _pair(np.complex128, (6,), seed=7)
    got = tj.device_get(tj.jit(lambda z, w: {k: f(tnp, z, w) for k, f in STATS.items()},
                               device=device)(z, w))  # fmt: skip
    for name, fn in STATS.items():
        ref = fn(np, z, w)
        for out in (np.asarray(got[name]), np.asarray(fn(tnp, z, w))):
            assert out.dtype == ref.dtype and out.shape == ref.shape, (name, out.dtype, ref.shape)
            np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-15, err_msg=name)
    for fn in (tnp.quantile, tnp.percentile, tnp.nanquantile, tnp.nanpercentile):
        with pytest.raises(TypeError, match="real numbers"):  # as NumPy's
            fn(z, 0.5)


REAL_ONLY = ["fabs", "cbrt", "signbit", "spacing", "frexp", "isposinf", "isneginf", "copysign",
             "hypot", "logaddexp", "logaddexp2", "heaviside", "nextafter", "digitize",
             "interp"]  # fmt: skip


@pytest.mark.parametrize("name", REAL_ONLY)
def test_real_only_functions_refuse_complex_values_as_numpy(name):
    # they returned numbers computed from |z| or the real part
    z = _pair(np.complex128, (3,))
    args = (z,) if name in REAL_ONLY[:7] else (z, z)
    if name == "interp":
        args = (z, np.arange(3.0), z)  # complex fp is fine, complex x is not
    with pytest.raises(TypeError):
        getattr(np, name)(*args)
    with pytest.raises(tj.errors.TracejitTypeError, match=f"'{name}'.*complex"):
        tj.jit(getattr(tnp, name))(*args)


def test_cumprod_keeps_its_first_products_as_numpy(device):
    # the log-depth scan multiplied the first element by 1 + 0j: inf + 0j became inf + nanj
    z = np.array([[np.inf + 0j, 1 + 1j], [np.nan + 0j, 2 - 1j], [1 - 1j, 3 + 0j]])
    got = tj.device_get(tj.jit(lambda z: tnp.cumprod(z, axis=0), device=device)(z))
    with np.errstate(invalid="ignore"):
        want = np.cumprod(z, axis=0)
    np.testing.assert_array_equal(got, want)  # NumPy's sequential products, inf + nanj too
    first_row = tj.device_get(tj.jit(tnp.cumprod, device=device)(z[0]))
    np.testing.assert_array_equal(first_row, np.cumprod(z[0]))
