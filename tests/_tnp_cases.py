"""The table of tracejit.numpy names checked by tests/backend/test_tnp_surface.py.

Each case is (name, fn, args, grad): `fn(m, *args)` computes with module `m` (NumPy, the
oracle, or tracejit.numpy); `grad` says whether the case is differentiable in its float
arguments (checked against float64 finite differences). The arguments are concrete NumPy
arrays; under `jit` every one of them is traced.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Case(NamedTuple):
    name: str
    fn: object
    args: tuple
    grad: bool = False


_rng = np.random.default_rng(12)
X = _rng.uniform(0.2, 0.9, (3, 4))  # positive, distinct, away from kinks
Y = _rng.uniform(-0.9, 0.9, (3, 4))
V = np.array([0.7, -0.3, 0.25, 0.9, -0.55])  # distinct values: sort is differentiable
W = np.array([0.5, 1.25, 2.0])
I = np.array([[3, -1, 0, 7], [2, 2, -5, 1], [0, 4, 4, -2]])
NANS = np.array([[0.5, np.nan, 0.2], [np.nan, np.nan, np.nan], [0.3, 0.1, -0.4]])
B = I > 0
SPECIAL = np.array([0.5, np.nan, -np.inf, np.inf, -0.0])
SQ = _rng.uniform(-1, 1, (3, 3))
V3 = _rng.uniform(-1, 1, (4, 3))


def _jax(m, **kwargs) -> dict:
    """JAX's extra keywords (static sizes needed under `jit`), for tracejit.numpy only."""
    return {} if m is np else kwargs


def _c(name, fn, *args, grad=False):
    return Case(name, fn, args, grad)


ELEMENTWISE = [
    _c("logaddexp", lambda m, x, y: m.logaddexp(x, y), X, Y, grad=True),
    _c("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), X, Y, grad=True),
    _c("hypot", lambda m, x, y: m.hypot(x, y), X, Y, grad=True),
    _c("deg2rad", lambda m, x: m.deg2rad(x), Y, grad=True),
    _c("radians", lambda m, x: m.radians(x), Y, grad=True),
    _c("rad2deg", lambda m, x: m.rad2deg(x), Y, grad=True),
    _c("degrees", lambda m, x: m.degrees(x), Y, grad=True),
    _c("cbrt", lambda m, x: m.cbrt(x), Y, grad=True),
    _c("copysign", lambda m, x, y: m.copysign(x, y), X, Y, grad=True),
    _c("signbit", lambda m, x: m.signbit(x), np.array([-1.0, -0.0, 0.0, 2.0])),
    _c("fabs", lambda m, x: m.fabs(x), Y, grad=True),
    _c("rint", lambda m, x: m.rint(x * 4), Y),
    _c("sinc", lambda m, x: m.sinc(x), np.array([0.0, 0.3, -1.7, 2.0]), grad=True),
    _c("heaviside", lambda m, x: m.heaviside(x, 0.5), np.array([-1.0, 0.0, 2.0, np.nan])),
    _c("float_power", lambda m, x, y: m.float_power(x, y), X, Y, grad=True),
    _c("fmod", lambda m, x: m.fmod(x, 3), I),
    _c("fmod", lambda m, x, y: m.fmod(x * 3, y), X, Y, grad=True),
    _c("divmod", lambda m, x: m.divmod(x, 3), I),
    _c("modf", lambda m, x: m.modf(x * 3), Y, grad=True),
    _c("ldexp", lambda m, x, i: m.ldexp(x, i), X, I, grad=True),
    _c("nan_to_num", lambda m, x: m.nan_to_num(x, posinf=9.0), np.array([np.nan, np.inf, -1.0])),
    _c("isposinf", lambda m, x: m.isposinf(x), np.array([np.inf, -np.inf, 1.0])),
    _c("isneginf", lambda m, x: m.isneginf(x), np.array([np.inf, -np.inf, 1.0])),
    _c("isclose", lambda m, x, y: m.isclose(x, y, equal_nan=True), NANS, NANS + 1e-9),
    _c("allclose", lambda m, x, y: m.allclose(x, y + 1e-9), X, X),
    _c("array_equal", lambda m, x, y: m.array_equal(x, y), I, I),
    _c("array_equiv", lambda m, x, y: m.array_equiv(x, y[0]), I[:1].repeat(3, 0), I),
    _c("real", lambda m, x: m.real(x), Y, grad=True),
    _c("imag", lambda m, x: m.imag(x), Y),
    _c("conj", lambda m, x: m.conj(x), Y, grad=True),
    _c("conjugate", lambda m, x: m.conjugate(x), Y, grad=True),
    _c("angle", lambda m, x: m.angle(x), Y),
    _c("iscomplex", lambda m, x: m.iscomplex(x), Y),
    _c("isreal", lambda m, x: m.isreal(x), Y),
    _c("bitwise_count", lambda m, x: m.bitwise_count(x).astype(np.int32), I),
]

MANIP = [
    _c("diff", lambda m, x: m.diff(x, n=2, axis=0, append=0.5), X, grad=True),
    _c("ediff1d", lambda m, x: m.ediff1d(x, to_begin=0.0, to_end=[1.0, 2.0]), X, grad=True),
    _c("append", lambda m, x, y: m.append(x, y, axis=1), X, Y, grad=True),
    _c("insert", lambda m, x, v: m.insert(x, [1, 3], v[:2], axis=None), X, W, grad=True),
    _c("delete", lambda m, x: m.delete(x, [0, 2], axis=1), X, grad=True),
    _c("resize", lambda m, x: m.resize(x, (5, 3)), X, grad=True),
    _c("compress", lambda m, x: m.compress([True, False, True], x, axis=0), X, grad=True),
    _c("extract", lambda m, x: m.extract(X > 0.5, x), X, grad=True),
    _c("rot90", lambda m, x: m.rot90(x, 3), X, grad=True),
    _c("fliplr", lambda m, x: m.fliplr(x), X, grad=True),
    _c("flipud", lambda m, x: m.flipud(x), X, grad=True),
    _c("rollaxis", lambda m, x: m.rollaxis(x[None], 2, 1), X, grad=True),
    _c("dstack", lambda m, x, y: m.dstack([x, y]), X, Y, grad=True),
    _c("hsplit", lambda m, x: m.hsplit(x, 2)[1], X, grad=True),
    _c("vsplit", lambda m, x: m.vsplit(x, [1])[1], X, grad=True),
    _c("dsplit", lambda m, x: m.dsplit(x[None], 2)[0], X, grad=True),
    _c("unstack", lambda m, x: m.unstack(x, axis=1)[2], X, grad=True),
    _c("kron", lambda m, x, y: m.kron(x[:2, :2], y[:2]), X, Y, grad=True),
    _c("cross", lambda m, x, y: m.cross(x, y), V3, V3[::-1], grad=True),
    _c("vander", lambda m, x: m.vander(x, 3), W, grad=True),
    _c("pad", lambda m, x: m.pad(x, ((1, 2), (2, 0)), mode="reflect"), X, grad=True),
    _c("pad", lambda m, x: m.pad(x, 2, mode="symmetric"), X, grad=True),
    _c("pad", lambda m, x: m.pad(x, ((0, 1), (3, 1)), mode="wrap"), X, grad=True),
    _c("pad", lambda m, x: m.pad(x, 1, mode="edge"), X, grad=True),
    _c("pad", lambda m, x: m.pad(x, 1, constant_values=((1, 2), (3, 4))), X, grad=True),
    _c("reshape", lambda m, x: m.reshape(x, (2, 6), order="F"), X, grad=True),
    _c("ravel", lambda m, x: m.ravel(x, order="F"), X, grad=True),
]

CONSTRUCT = [
    _c("diag", lambda m, v: m.diag(v, 1), W, grad=True),
    _c("diag", lambda m, x: m.diag(x, -1), X, grad=True),
    _c("diagflat", lambda m, x: m.diagflat(x[:2, :2]), X, grad=True),
    _c("meshgrid", lambda m, a, b: m.meshgrid(a, b)[0] * m.meshgrid(a, b)[1], W, V, grad=True),
    _c("meshgrid", lambda m, a, b: m.meshgrid(a, b, indexing="ij", sparse=True)[1], W, V),
    _c("copy", lambda m, x: m.copy(x), X, grad=True),
    _c("select", lambda m, x: m.select([x < 0.4, x > 0.7], [x, x * 10], -1.0), X, grad=True),
    _c("choose", lambda m, i, y: m.choose(m.clip(i, 0, 2), [y, y * 2, y * 3]), I, Y, grad=True),
    _c("piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 0.5], [lambda v: -v, 2.0]), Y),
    _c("isin", lambda m, i: m.isin(i, [2, 4, -5]), I),
    _c("fromfunction", lambda m: m.fromfunction(lambda i, j: i * 3 + j, (2, 3))),
    _c("unravel_index", lambda m, i: m.unravel_index(m.abs(i), (4, 2)), I),
    _c("ravel_multi_index", lambda m, i: m.ravel_multi_index((m.abs(i) % 3, i % 2), (3, 2)), I),
    _c("logspace", lambda m: m.logspace(0, 2, 5)),
    _c("geomspace", lambda m: m.geomspace(1, 1000, 4)),
    _c("tril_indices_from", lambda m, x: m.tril_indices_from(x, 1)[1], X),
    _c("triu_indices_from", lambda m, x: m.triu_indices_from(x)[0], X),
    _c("diag_indices_from", lambda m, x: m.diag_indices_from(x)[0], SQ),
    _c("ix_", lambda m, x: x[m.ix_([0, 2], [1, 3])], X, grad=True),
    _c("r_", lambda m, x, y: m.r_[x[0], 3.0, 0:2, y[1]], X, Y, grad=True),
    _c("r_", lambda m, x, y: m.r_["1", x, y], X, Y, grad=True),
    _c("c_", lambda m, x, y: m.c_[x[0], y[1]], X, Y, grad=True),
    _c("einsum", lambda m, a, b: m.einsum("...ij,...j->...i", a, b), X[None], W[:1].repeat(4)),
    _c("einsum", lambda m, a, b: m.einsum(a, [0, 1], b, [1], [0]), X, X[0], grad=True),
    _c("einsum", lambda m, a: m.einsum("i...->...", a), X, grad=True),
]

STATS = [
    _c("sort", lambda m, v: m.sort(v), V, grad=True),
    _c("sort", lambda m, x: m.sort(x, axis=0), NANS),
    _c("argsort", lambda m, x: m.argsort(x, axis=None), np.array([3.0, 1.0, 3.0, np.nan, 0.0])),
    _c("argsort", lambda m, i: m.argsort(i, axis=1, kind="stable"), I),
    _c("lexsort", lambda m, i: m.lexsort((i[0], i[1] % 2)), I),
    _c("searchsorted", lambda m, v, w: m.searchsorted(m.sort(v), w, side="right"), V, W),
    _c("digitize", lambda m, x: m.digitize(x, np.array([0.3, 0.5, 0.8])), X),
    _c("median", lambda m, x: m.median(x, axis=1), X, grad=True),
    _c("percentile", lambda m, x: m.percentile(x, [10, 60], axis=0), X, grad=True),
    _c("quantile", lambda m, x: m.quantile(x, 0.3, method="nearest", keepdims=True), X),
    _c("nanmedian", lambda m, x: m.nanmedian(x, axis=1), NANS),
    _c("nanpercentile", lambda m, x: m.nanpercentile(x, 40, axis=0), NANS),
    _c("nanquantile", lambda m, x: m.nanquantile(x, [0.25, 0.9], axis=1), NANS),
    _c("cumprod", lambda m, x: m.cumprod(x, axis=1), Y, grad=True),
    _c("cumprod", lambda m, i: m.cumprod(i), I),
    _c("cumulative_prod", lambda m, v: m.cumulative_prod(v, include_initial=True), V, grad=True),
    _c("nancumsum", lambda m, x: m.nancumsum(x, axis=0), NANS),
    _c("nancumprod", lambda m, x: m.nancumprod(x), NANS),
    _c("nanprod", lambda m, x: m.nanprod(x, axis=1), NANS),
    _c("nanmax", lambda m, x: m.nanmax(x, axis=0), NANS[[0, 2]]),
    _c("nanmin", lambda m, x: m.nanmin(x), NANS),
    _c("nanargmax", lambda m, x: m.nanargmax(x, axis=1), NANS[[0, 2]]),
    _c("nanargmin", lambda m, x: m.nanargmin(x), NANS),
    _c("nanvar", lambda m, x: m.nanvar(x, axis=1, ddof=1), NANS[[0, 2]]),
    _c("nanstd", lambda m, x: m.nanstd(x), NANS),
    _c("ptp", lambda m, x: m.ptp(x, axis=0), X, grad=True),
    _c("count_nonzero", lambda m, i: m.count_nonzero(i, axis=1), I),
    _c("average", lambda m, x, w: m.average(x, axis=0, weights=w), X, W, grad=True),
    _c("cov", lambda m, x: m.cov(x), X, grad=True),
    _c("cov", lambda m, x, y: m.cov(x, y, rowvar=False, ddof=0), X, Y, grad=True),
    _c("corrcoef", lambda m, x: m.corrcoef(x), X, grad=True),
    _c("sum", lambda m, x: m.sum(x, axis=1, where=x > 0.5), X, grad=True),
    _c("prod", lambda m, x: m.prod(x, where=x > 0.5), X, grad=True),
    _c("mean", lambda m, x: m.mean(x, axis=0, where=x > 0.3), X, grad=True),
    _c("max", lambda m, x: m.max(x, axis=1, where=x < 0.8, initial=0.0), X, grad=True),
    _c("all", lambda m, b: m.all(b, axis=0, where=[True, False, True, True]), B),
]

SIGNAL = [
    _c("convolve", lambda m, v, w: m.convolve(v, w), V, W, grad=True),
    _c("convolve", lambda m, v, w: m.convolve(w, v, mode="same"), V, W, grad=True),
    _c("convolve", lambda m, v, w: m.convolve(v, w, mode="valid"), V, W, grad=True),
    _c("correlate", lambda m, v, w: m.correlate(v, w, mode="full"), V, W, grad=True),
    _c("correlate", lambda m, v, w: m.correlate(w, v, mode="same"), V, W, grad=True),
    _c("interp", lambda m, x, w: m.interp(x * 3, [0.0, 1.0, 2.5], w), X, W, grad=True),
    _c("bincount", lambda m, i: m.bincount(m.abs(i).ravel(), minlength=9, **_jax(m, length=9)), I),
    _c(
        "bincount",
        lambda m, i, x: m.bincount(i.ravel() % 4, x.ravel(), **_jax(m, length=4)),
        I,
        X,
        grad=True,
    ),
    _c("trapezoid", lambda m, x: m.trapezoid(x, dx=0.5), X, grad=True),
    _c("trapezoid", lambda m, x, w: m.trapezoid(x, w, axis=0), X, W, grad=True),
    _c("gradient", lambda m, x: m.gradient(x, 0.5)[1], X, grad=True),
    _c("polyval", lambda m, w, x: m.polyval(w, x), W, X, grad=True),
    _c("polyadd", lambda m, w, v: m.polyadd(w, v), W, V, grad=True),
    _c("polysub", lambda m, w, v: m.polysub(w, v), W, V, grad=True),
    _c("polymul", lambda m, w, v: m.polymul(w, v), W, V, grad=True),
    _c("polyder", lambda m, v: m.polyder(v, 2), V, grad=True),
    _c("polyint", lambda m, v: m.polyint(v, 2, k=[1.0, 2.0]), V, grad=True),
    _c("unwrap", lambda m, v: m.unwrap(v * 9), V, grad=True),
]

LINALG = [
    _c("linalg.norm", lambda m, x: m.linalg.norm(x, ord=1), X, grad=True),
    _c("linalg.norm", lambda m, x: m.linalg.norm(x, ord=-np.inf), Y, grad=True),
    _c("linalg.norm", lambda m, x: m.linalg.norm(x, ord=3, axis=1), Y, grad=True),
    _c("linalg.vector_norm", lambda m, x: m.linalg.vector_norm(x, ord=0.5, axis=0), X, grad=True),
    _c("linalg.matrix_norm", lambda m, x: m.linalg.matrix_norm(x, ord=np.inf), Y, grad=True),
    _c("linalg.multi_dot", lambda m, a, b: m.linalg.multi_dot([a[0], b.T, a]), X, Y, grad=True),
    _c("linalg.matrix_power", lambda m, a: m.linalg.matrix_power(a, 5), SQ, grad=True),
    _c("linalg.matrix_power", lambda m, a: m.linalg.matrix_power(a, 0), SQ),
    _c("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), V3, V3[::-1], grad=True),
    _c("linalg.diagonal", lambda m, a: m.linalg.diagonal(a[None], offset=1), X, grad=True),
]

CASES = ELEMENTWISE + MANIP + CONSTRUCT + STATS + SIGNAL + LINALG

# The elementwise family, on inputs inside each function's domain.
_UNIT = _rng.uniform(-0.8, 0.8, (2, 3))
_UNARY = {
    "absolute": Y, "arccos": _UNIT, "acos": _UNIT, "arccosh": X + 1.5, "acosh": X + 1.5,
    "arcsin": _UNIT, "asin": _UNIT, "arcsinh": Y, "asinh": Y, "arctan": Y, "atan": Y,
    "arctanh": _UNIT, "atanh": _UNIT, "cosh": Y, "tan": _UNIT, "exp2": Y, "log10": X,
    "positive": Y, "sign": Y, "reciprocal": X,
}  # fmt: skip
_ROUNDING = ("around", "round", "ceil", "trunc")
_BINARY = ("divide", "true_divide", "subtract", "minimum", "fmax", "fmin", "power", "pow",
           "atan2", "floor_divide", "remainder", "mod")  # fmt: skip
_DIFFERENTIABLE_BINARY = {"divide", "true_divide", "subtract", "minimum", "fmax", "fmin",
                          "power", "pow", "atan2"}  # fmt: skip
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
            "logical_and", "logical_or", "logical_xor")  # fmt: skip
_INT_BINARY = ("bitwise_or", "bitwise_xor", "left_shift", "right_shift", "bitwise_left_shift",
               "bitwise_right_shift")  # fmt: skip
_INT_UNARY = ("invert", "bitwise_not", "bitwise_invert")


def _unary(name):
    return lambda m, x: getattr(m, name)(x)


def _binary(name):
    return lambda m, x, y: getattr(m, name)(x, y)


FAMILY = (
    [_c(n, _unary(n), x, grad=True) for n, x in _UNARY.items()]
    + [_c(n, lambda m, x, n=n: getattr(m, n)(x * 5), Y) for n in _ROUNDING]
    + [_c(n, _binary(n), X, Y if n not in ("power", "pow") else Y * 2, grad=n in _DIFFERENTIABLE_BINARY)
       for n in _BINARY]
    + [_c(n, _binary(n), X > 0.5, Y > 0) for n in _COMPARE[6:]]
    + [_c(n, _binary(n), X, Y) for n in _COMPARE[:6]]
    + [_c(n, lambda m, i, n=n: getattr(m, n)(i, np.abs(I) % 3), I) for n in _INT_BINARY]
    + [_c(n, _unary(n), I) for n in _INT_UNARY]
    + [_c("logical_not", _unary("logical_not"), B)]
    + [_c(n, _unary(n), SPECIAL) for n in ("isnan", "isinf", "isfinite")]
)  # fmt: skip

MISC = [
    *[_c(n, lambda m, n=n: np.array(getattr(m, n))) for n in ("pi", "e", "inf", "euler_gamma")],
    _c("nan", lambda m: np.isnan(np.array([m.nan]))),
    _c("newaxis", lambda m, x: x[m.newaxis, :, m.newaxis], X, grad=True),
    _c("shape", lambda m, x: np.array([*m.shape(x), m.ndim(x), m.size(x), m.size(x, 1)]), X),
    _c("ndim", lambda m, x: np.array(m.ndim(x[0])), X),
    _c("size", lambda m, x: np.array(m.size(x)), X),
    _c("isscalar", lambda m, x: np.array([m.isscalar(x), m.isscalar(2.0)]), X),
    _c("iterable", lambda m, x: np.array([m.iterable(x), m.iterable(2.0)]), X),
    _c("iscomplexobj", lambda m, x: np.array(m.iscomplexobj(x)), X),
    _c("isrealobj", lambda m, x: np.array(m.isrealobj(x)), X),
    _c("argpartition", lambda m, v: m.argpartition(v, 2)[2], V),
    _c("partition", lambda m, v: m.partition(v, 3)[3], V, grad=True),
    _c("array_split", lambda m, x: m.array_split(x, 3, axis=1)[2], X, grad=True),
    _c("atleast_3d", lambda m, v: m.atleast_3d(v), V, grad=True),
    _c("matrix_transpose", lambda m, x: m.matrix_transpose(x[None]), X, grad=True),
    _c("inner", lambda m, x, y: m.inner(x, y), X, Y, grad=True),
    _c("full_like", lambda m, x: m.full_like(x, 2.5), X),
    _c("empty_like", lambda m, x: m.empty_like(x).shape and m.zeros_like(x), X),
    _c("nansum", lambda m, x: m.nansum(x, axis=1), NANS),
    _c("nanmean", lambda m, x: m.nanmean(x, axis=0), NANS[[0, 2]]),
    _c("cumulative_sum", lambda m, v: m.cumulative_sum(v, include_initial=True), V, grad=True),
    _c("expand_dims", lambda m, x: m.expand_dims(x, (0, 3)), X, grad=True),
    _c("amax", lambda m, x: m.amax(x, axis=0), X, grad=True),
    _c("amin", lambda m, x: m.amin(x, axis=1), X, grad=True),
    _c("triu", lambda m, x: m.triu(x, 1), X, grad=True),
    _c("indices", lambda m: m.indices((2, 3))),
    _c("tril_indices", lambda m, x: x[m.tril_indices(3)], SQ, grad=True),
    _c("triu_indices", lambda m, x: x[m.triu_indices(3, 1)], SQ, grad=True),
    _c("diag_indices", lambda m, x: x[m.diag_indices(3)], SQ, grad=True),
    _c("mask_indices", lambda m, x: x[m.mask_indices(3, m.triu)], SQ, grad=True),
    _c("index_exp", lambda m, x: x[m.index_exp[1:, ::2]], X, grad=True),
    _c("s_", lambda m, x: x[m.s_[::-1, 1]], X, grad=True),
    _c("mgrid", lambda m, x: x * m.mgrid[0:3, 0:4][1], X, grad=True),
    _c("ogrid", lambda m, x: x * m.ogrid[0:3, 0:4][0], X, grad=True),
    *[_c(n, lambda m, n=n: getattr(m, n)(5)) for n in ("bartlett", "blackman", "hamming")],
    _c("hanning", lambda m: m.hanning(5)),
    _c("kaiser", lambda m: m.kaiser(5, 3.0)),
    _c("broadcast_shapes", lambda m: np.array(m.broadcast_shapes((2, 1), (3,)))),
]

CASES = CASES + FAMILY + MISC

# Data-dependent sizes (`size=` under jit, as in JAX) and the other later names.
_DUP = np.array([3.0, 1.0, np.nan, 3.0, 2.0, 1.0, np.nan])
SELECT = [
    _c("nonzero", lambda m, i: m.nonzero(i > 0, **_jax(m, size=7)), I),
    _c("flatnonzero", lambda m, i: m.flatnonzero(i, **_jax(m, size=10)), I),
    _c("argwhere", lambda m, i: m.argwhere(i < 0, **_jax(m, size=3)), I),
    _c("unique", lambda m, v: m.unique(v, True, True, True, **_jax(m, size=4)), _DUP),
    _c("unique", lambda m, i: m.unique(i, return_counts=True, **_jax(m, size=9)), I),
    _c("unique_values", lambda m, i: m.sort(m.unique_values(i % 3, **_jax(m, size=3))), I),
    _c("unique_counts", lambda m, i: tuple(m.unique_counts(i % 3, **_jax(m, size=3))), I),
    _c("unique_inverse", lambda m, i: tuple(m.unique_inverse(i % 3, **_jax(m, size=3))), I),
    _c("unique_all", lambda m, v: tuple(m.unique_all(v, **_jax(m, size=5))), _DUP),
    _c("union1d", lambda m, i, j: m.union1d(i % 3, j, **_jax(m, size=5)), I, np.array([7, 9])),
    _c("matvec", lambda m, x, v: m.matvec(x, v), X[None], X[0], grad=True),
    _c("vecmat", lambda m, v, x: m.vecmat(v, x), W, X, grad=True),
    _c("block", lambda m, x, y: m.block([[x, y[:, :1]], [y[:1], x[:1, :1]]]), X, Y, grad=True),
    _c("apply_over_axes", lambda m, x: m.apply_over_axes(m.sum, x, [0, 1]), X, grad=True),
    _c("fill_diagonal", lambda m, x, w: _inplace(m, "fill_diagonal", x, w, True), X, W, grad=True),
    _c("put", lambda m, x, w: _inplace(m, "put", x, [1, 5, 5], w), X, W, grad=True),
    _c("place", lambda m, x, w: _inplace(m, "place", x, X > 0.5, w), X, W, grad=True),
    _c(
        "put_along_axis",
        lambda m, x, w: _inplace(m, "put_along_axis", x, np.array([[1], [0], [3]]), w[:, None], 1),
        X,
        W,
        grad=True,
    ),
    _c("histogram", lambda m, x: m.histogram(x, 5), X),
    _c(
        "histogram",
        lambda m, x, w: m.histogram(x, [0.3, 0.5, 0.6, 0.8], weights=w, density=True),
        X,
        Y,
        grad=True,
    ),
    _c("histogram_bin_edges", lambda m, x: m.histogram_bin_edges(x, 4, range=(0.0, 1.0)), X),
    _c("poly", lambda m, v: m.poly(v), V, grad=True),
    _c("gcd", lambda m, i: m.gcd(i, 12), I),
    _c("lcm", lambda m, i: m.lcm(i, 6), I),
    _c("fft.fftshift", lambda m, x: m.fft.fftshift(x), X, grad=True),
    _c("fft.ifftshift", lambda m, x: m.fft.ifftshift(x, axes=1), X, grad=True),
    _c("fft.fftfreq", lambda m: m.fft.fftfreq(6, 0.5)),
    _c("fft.rfftfreq", lambda m: m.fft.rfftfreq(7)),
]


def _inplace(m, name, x, *args):
    """NumPy's in-place writer on a copy, or tracejit's functional form (inplace=False)."""
    if m is np:
        y = x.copy()
        getattr(np, name)(y, *args)
        return y
    return getattr(m, name)(x, *args, inplace=False)


CASES = CASES + SELECT
# What the compiled tests run: the compositions. FAMILY's names are one primitive each (the
# backend tests compile every primitive) and MISC's mostly return NumPy constants.
COMPILED = [c for c in CASES if c not in FAMILY and c not in MISC]

VMAPPED = [
    _c(
        "apply_along_axis",
        lambda m, x: m.apply_along_axis(lambda r: m.stack([r.sum(), r[0]]), 0, x),
        X,
        grad=True,
    ),
    _c(
        "vectorize",
        lambda m, x, w: m.vectorize(lambda a, b: a * b + 1)(x[:, :1], w),
        X,
        W,
        grad=True,
    ),
    _c(
        "vectorize",
        lambda m, x: m.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")(x, x[0]),
        X,
        grad=True,
    ),
    _c("polydiv", lambda m, v, w: m.polydiv(v, w)[0], V, W, grad=True),
    _c("histogramdd", lambda m, x: m.histogramdd(x[:, :3], (2, 3, 2))[0], V3),
    _c(
        "histogram2d",
        lambda m, x, w: m.histogram2d(x[0], x[1], 2, weights=w[:1].repeat(4))[0],
        X,
        W,
    ),
]
CASES = CASES + VMAPPED
COMPILED = COMPILED + VMAPPED

_A, _B = np.array([3, 1, 2, 3, 7, 7, 0]), np.array([3, 4, 1, 9])
SETS = [
    _c("intersect1d", lambda m, a, b: m.intersect1d(a, b, **_jax(m, size=2)), _A, _B),
    _c("setdiff1d", lambda m, a, b: m.setdiff1d(a, b, **_jax(m, size=3)), _A, _B),
    _c("setxor1d", lambda m, a, b: m.setxor1d(a, b, **_jax(m, size=5)), _A, _B),
    _c("setdiff1d", lambda m, v, w: m.setdiff1d(v, w, **_jax(m, size=5)), V, W, grad=True),
]
CASES = CASES + SETS
COMPILED = COMPILED + SETS

_F = np.array([0.0, -0.0, 1.0, -0.75, 2.0**-1074, 3 * 2.0**-1060, 1e300, -1e-300, 0.1, 2.0**52,
               np.finfo(np.float64).max, np.inf, -np.inf, np.nan])  # fmt: skip
_F32 = np.array([0.0, -0.0, 1.0, -0.75, 2.0**-149, 3 * 2.0**-140, 1e38, -1e-38, 0.1, 2.0**23,
                 np.finfo(np.float32).max, np.inf, -np.inf, np.nan], np.float32)  # fmt: skip
_BITS = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1], [0, 1, 1, 0, 1, 1, 0, 1, 0]])
_PX = np.linspace(-1.0, 1.0, 7)
FLOAT_BITS = [
    _c("frexp", lambda m, x: m.frexp(x), _F),
    _c("frexp", lambda m, x: m.frexp(x), _F32),
    _c("frexp", lambda m, x: m.frexp(x)[0], Y, grad=True),
    _c("nextafter", lambda m, x: m.nextafter(x, np.roll(x, 1)), _F),
    _c("nextafter", lambda m, x: m.nextafter(x, -x), _F32),
    _c("nextafter", lambda m, x: m.nextafter(x, x * 0 + np.inf), _F[:-3]),
    _c("spacing", lambda m, x: m.spacing(x), _F),
    _c("spacing", lambda m, x: m.spacing(x), _F32),
    _c("i0", lambda m, x: m.i0(x), np.array([0.0, -0.5, 3.0, 29.9, 30.0, -45.0, 700.0, 720.0])),
    _c("i0", lambda m, x: m.i0(x * 4), Y, grad=True),
    _c("i0", lambda m, x: m.i0(x * 2 + 31), Y, grad=True),
    _c("packbits", lambda m, b: m.packbits(b), _BITS),
    _c("packbits", lambda m, b: m.packbits(b > 0, axis=1, bitorder="little"), _BITS),
    _c("packbits", lambda m, i: m.packbits(i, axis=0), I),
    _c("unpackbits", lambda m, b: m.unpackbits(m.packbits(b, axis=-1), axis=-1), _BITS),
    _c("unpackbits", lambda m, b: m.unpackbits(m.packbits(b), count=-3, bitorder="little"), _BITS),
    _c("unpackbits", lambda m, b: m.unpackbits(m.packbits(b, axis=0), axis=0, count=5), _BITS),
    _c("polyfit", lambda m, x, y: m.polyfit(x, y, 3), _PX, np.sin(3 * _PX), grad=True),
    _c(
        "polyfit",
        lambda m, x, y, w: m.polyfit(x, np.stack([y, y * y], 1), 2, w=w),
        _PX,
        np.cos(_PX),
        _PX + 2.0,
        grad=True,
    ),
    _c("sort_complex", lambda m, x, y: m.sort_complex(x.round(1) + 1j * y), Y, X),
    _c("sort_complex", lambda m, i: m.sort_complex(i[0]), I),
]
CASES = CASES + FLOAT_BITS
COMPILED = COMPILED + FLOAT_BITS

# Gradients of the float names whose cases above check values only (eager: one primitive
# each, or compositions compiled above): NaN-ignoring reductions with a NaN in each row but
# none all NaN, order statistics on distinct values, away from every kink.
_NANS2 = np.array([[0.5, np.nan, 0.2, 0.8], [0.1, 0.7, np.nan, 0.3], [0.35, 0.15, -0.4, 0.9]])
GRADS = [
    _c("angle", lambda m, x: m.angle(x * (1 + 0.5j) + 0.3j), Y, grad=True),
    _c("imag", lambda m, x: m.imag(m.exp(1j * x)), Y, grad=True),
    _c("mod", lambda m, x, y: m.mod(x * 3.0, y + 1.7), X, Y, grad=True),
    _c("remainder", lambda m, x: m.remainder(-x * 5.0, 1.3), X, grad=True),
    _c("nan_to_num", lambda m, x: m.nan_to_num(x, nan=2.0), _NANS2, grad=True),
    *[
        _c(n, lambda m, x, n=n: getattr(m, n)(x, axis=1), _NANS2, grad=True)
        for n in (
            "nansum",
            "nanprod",
            "nanmean",
            "nanmax",
            "nanmin",
            "nancumsum",
            "nancumprod",
            "nanmedian",
        )
    ],
    _c("nanvar", lambda m, x: m.nanvar(x, axis=1, ddof=1), _NANS2, grad=True),
    _c("nanstd", lambda m, x: m.nanstd(x, axis=1), _NANS2, grad=True),
    _c("nanquantile", lambda m, x: m.nanquantile(x, [0.25, 0.9], axis=1), _NANS2, grad=True),
    _c("nanpercentile", lambda m, x: m.nanpercentile(x, 40.0, axis=1), _NANS2, grad=True),
    _c("quantile", lambda m, x: m.quantile(x, [0.3, 0.8], axis=0), X, grad=True),
    _c(
        "piecewise",
        lambda m, x: m.piecewise(x, [x < 0, x > 0.5], [lambda v: v * v, 2.0]),
        Y,
        grad=True,
    ),
    _c("nextafter", lambda m, x: m.nextafter(x, x * 0.0), X, grad=True),
    _c("histogram_bin_edges", lambda m, x: m.histogram_bin_edges(x, 4), X, grad=True),
    _c("unique", lambda m, v: m.unique(v, **_jax(m, size=5)), V, grad=True),
    _c("unique_all", lambda m, v: m.unique_all(v, **_jax(m, size=5)).values, V, grad=True),
]
CASES = CASES + GRADS

# Regressions: the running product's identity was x * 0 + 1, NaN where x is infinite
REGRESSIONS = [
    _c("cumprod", lambda m, x: m.cumprod(x), np.array([np.inf, 2.0, -3.0, 0.5, -np.inf])),
    _c(
        "cumulative_prod",
        lambda m, x: m.cumulative_prod(x, include_initial=True),
        np.array([-np.inf, 2.0, 0.0]),
    ),
]
CASES = CASES + REGRESSIONS
COMPILED = COMPILED + REGRESSIONS
