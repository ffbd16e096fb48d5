"""tracejit/_portable_math.py and _portable_erf.py, the elementary functions of tracejit.random
built from correctly rounded operations: their error against exact values (NumPy's long
double, or mpmath), NumPy's special values, and the same bits eagerly and compiled on each
device under test.

Measured bounds (float64, in ulps of the exact result): log 0.75, exp 0.82, log1p 1.12,
sinpi 1.6, cospi 1.6, tanpi 2.8, erf 1.5, power below 1 + 2 |y log x|. float32 log, exp,
log1p, sinpi, cospi, erf and erfinv compute in float32 (in ulps of float32): log 0.81, exp
0.92, log1p 1.43, sinpi 1.57, cospi 1.57, erf 1.62, erfinv 2.8 (2.77 before, from a
float64 erf); power and tanpi round their float64 result once.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from _bits import assert_same_bits

import tracejit as tj
from tracejit import _portable_math as pm
from tracejit._portable_erf import erf, erfinv

LD = np.longdouble
RNG = np.random.default_rng(0)
EDGES = np.array([0.0, -0.0, 5e-324, 1e-310, 2.2250738585072014e-308, 0.5, 1.0, 2.0, np.sqrt(2),
                  1e300, 1.7976931348623157e308, np.inf, -np.inf, np.nan, -1.0, -1e-300])  # fmt: skip
POSITIVE = np.concatenate([np.exp(RNG.uniform(-744, 709, 20000)), RNG.uniform(0, 3, 5000)])
EXPONENTS = np.concatenate([RNG.uniform(-745, 709.7, 20000), RNG.uniform(-1, 1, 5000),
                            RNG.uniform(-1e-8, 1e-8, 500)])  # fmt: skip
NEAR_ZERO = np.concatenate(
    [RNG.uniform(-0.999, 1, 20000), POSITIVE[:5000], RNG.uniform(-1e-5, 0, 500)]
)
TURNS = np.concatenate([RNG.uniform(-4, 4, 1500), RNG.uniform(-1e6, 1e6, 300),
                        RNG.integers(-40, 40, 100) / 4.0, [1e-300, 0.49999999999999994]])  # fmt: skip
ERF_ARGS = np.concatenate([RNG.uniform(-6.5, 6.5, 1500), RNG.uniform(-0.6, 0.6, 300),
                           np.arange(0, 6.5, 0.25) - 1e-15, 10.0 ** RNG.uniform(-300, 0, 100)])  # fmt: skip


def ulps(got, exact) -> float:
    """The largest |got - exact| in ulps of float64 at the exact value (long double exact)."""
    exact = np.asarray(exact, LD)
    spacing = np.spacing(np.abs(exact.astype(np.float64))).astype(LD)
    return float(np.max(np.abs(got.astype(LD) - exact) / spacing))


def mp_ulps(got, xs, fn) -> float:
    """As `ulps`, the exact values from mpmath at 120 bits."""
    worst = 0.0
    with mpmath.workprec(120):
        for g, x in zip(got, xs):
            exact = fn(mpmath.mpf(float(x)))
            if exact == 0 or mpmath.isinf(exact):
                assert float(exact) == g, (x, g)
                continue
            worst = max(
                worst, float(abs(mpmath.mpf(float(g)) - exact) / np.spacing(abs(float(exact))))
            )
    return worst


@pytest.mark.parametrize(
    ("fn", "exact", "xs", "bound"),
    [(pm.log, np.log, POSITIVE, 0.8), (pm.exp, np.exp, EXPONENTS, 0.85),
     (pm.log1p, np.log1p, NEAR_ZERO, 1.2)],
    ids=["log", "exp", "log1p"],
)  # fmt: skip
def test_float64_accuracy(fn, exact, xs, bound):
    assert ulps(fn(xs), exact(xs.astype(LD))) < bound


@pytest.mark.parametrize(
    ("fn", "exact", "bound"),
    [(pm.sinpi, mpmath.sinpi, 1.7), (pm.cospi, mpmath.cospi, 1.7),
     (pm.tanpi, lambda x: mpmath.sinpi(x) / mpmath.cospi(x), 2.9)],
    ids=["sinpi", "cospi", "tanpi"],
)  # fmt: skip
def test_turns_accuracy(fn, exact, bound):
    xs = TURNS[TURNS * 2 % 2 != 1]  # not where tan(pi x) is infinite
    assert mp_ulps(fn(xs), xs, exact) < bound


def test_erf_accuracy_and_erfinv():
    assert mp_ulps(erf(ERF_ARGS), ERF_ARGS, mpmath.erf) < 1.5
    y = np.linspace(-0.999999, 0.999999, 501)
    np.testing.assert_allclose(erf(erfinv(y)), y, rtol=0, atol=2e-16)


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(pm.log, np.log), (pm.log1p, np.log1p), (pm.exp, np.exp), (erf, np.vectorize(math.erf)),
     (pm.sinpi, lambda x: np.sin(np.pi * x)), (pm.cospi, lambda x: np.cos(np.pi * x))],
    ids=["log", "log1p", "exp", "erf", "sinpi", "cospi"],
)  # fmt: skip
def test_special_values_are_numpys(fn, ref):
    with np.errstate(all="ignore"):
        want = np.array([float(v) for v in ref(EDGES)])
    got = fn(EDGES)
    special = ~np.isfinite(want) | (want == 0) | ~np.isfinite(EDGES)
    np.testing.assert_array_equal(got[special], want[special])  # NaN where NumPy's is NaN
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))


F32_ARGS = {
    "log": np.arange(1, 2**31 - 2**23, 9973, dtype=np.uint32).view(np.float32),  # every binade
    "exp": np.concatenate([RNG.uniform(-103, 88.7, 100000), RNG.uniform(-1, 1, 20000)]),
    "log1p": np.concatenate([NEAR_ZERO, RNG.uniform(-0.999, 1, 100000)]),
    "sinpi": np.concatenate([RNG.uniform(-4, 4, 100000), TURNS]),
    "erf": np.concatenate([RNG.uniform(-4.5, 4.5, 100000), ERF_ARGS]),
    "erfinv": np.concatenate([RNG.uniform(-1, 1, 100000), 1 - 10.0 ** RNG.uniform(-7, -1, 1000)]),
}


@pytest.mark.parametrize(
    ("fn", "exact", "name", "bound"),
    [(pm.log, np.log, "log", 0.85), (pm.exp, np.exp, "exp", 0.95),
     (pm.log1p, np.log1p, "log1p", 1.5), (pm.sinpi, pm.sinpi, "sinpi", 1.6),
     (pm.cospi, pm.cospi, "sinpi", 1.6), (erf, erf, "erf", 1.7),
     (erfinv, erfinv, "erfinv", 2.9)],
    ids=["log", "exp", "log1p", "sinpi", "cospi", "erf", "erfinv"],
)  # fmt: skip
def test_float32_accuracy(fn, exact, name, bound):
    """float32 computes in float32: within `bound` ulps of float32 of the float64 result
    (NumPy's, or this module's float64 sinpi, cospi, erf and erfinv)."""
    x = F32_ARGS[name].astype(np.float32)
    if fn is erfinv:
        x = np.clip(x, -1 + np.finfo(np.float32).eps, 1 - np.finfo(np.float32).eps)
    got = fn(x)
    assert got.dtype == np.float32
    want = exact(x.astype(np.float64))
    keep = (np.abs(want) > np.finfo(np.float32).tiny) & (np.abs(want) < 3e38)  # normal results
    spacing = np.spacing(np.abs(want[keep]).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got[keep] - want[keep]) / spacing) < bound


def test_power_and_next_toward():
    x, y = POSITIVE[:2000], RNG.uniform(-3, 3, 2000)
    with np.errstate(over="ignore", under="ignore"):
        exact = np.power(x.astype(LD), y.astype(LD))
    keep = (exact > 1e-300) & (exact < 1e300)
    slack = 1 + 2 * np.abs(y * np.log(x))
    with np.errstate(over="ignore"):
        err = np.abs(pm.power(x, y).astype(LD) - exact) / np.spacing(exact.astype(np.float64))
    assert np.all(err[keep] <= slack[keep])
    assert pm.power(np.array([0.0, 0.0, 2.0]), np.array([0.0, 2.0, 0.0])).tolist() == [1, 0, 1]
    for dt in (np.float32, np.float64):
        v = np.concatenate([EDGES, -EDGES, POSITIVE[:300]]).astype(dt)
        for up in (True, False):
            want = np.nextafter(v, dt(np.inf) if up else dt(-np.inf))
            np.testing.assert_array_equal(pm.next_toward(v, up).view(f"u{v.itemsize}"),
                                          want.view(f"u{v.itemsize}"))  # fmt: skip


def test_same_bits_eagerly_and_compiled(device):
    """One program of every function (float64, float32 and float16 arguments)."""
    x64 = np.concatenate([EDGES, POSITIVE[::50], EXPONENTS[::50], NEAR_ZERO[::50], TURNS[::10]])
    args = [x64, x64.astype(np.float32), np.clip(x64, -6e4, 6e4).astype(np.float16)]

    def every(x):
        ops = [pm.log, pm.log1p, pm.exp, pm.sinpi, pm.cospi, pm.tanpi, erf]
        return [f(x) for f in ops] + [pm.power(x, x), pm.next_toward(x, True)]

    with np.errstate(all="ignore"):
        eager = [every(a) for a in args]
    compiled = tj.jit(lambda *xs: [every(a) for a in xs], device=device)(*args)
    for got, want in zip(tj.tree.leaves(compiled), tj.tree.leaves(eager), strict=True):
        assert_same_bits(got, np.asarray(want))


@pytest.mark.parametrize(
    ("fn", "slope"),
    [(pm.log, lambda x: 1 / x), (pm.exp, np.exp), (pm.log1p, lambda x: 1 / (1 + x)),
     (pm.sinpi, lambda x: np.pi * np.cos(np.pi * x)),
     (pm.cospi, lambda x: -np.pi * np.sin(np.pi * x)),
     (erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x))],
    ids=["log", "exp", "log1p", "sinpi", "cospi", "erf"],
)  # fmt: skip
def test_gradients(fn, slope):
    """The bit casts (exponents, signs) carry no gradient; the values they scale do."""
    for x in (0.3, 1.7, 1e-308):  # and a subnormal (scaled up first)
        if fn is not pm.log and x < 1e-300:
            continue
        grad = tj.grad(lambda v: fn(v))(np.float64(x))
        np.testing.assert_allclose(grad, slope(x), rtol=1e-12)
