"""Signals and polynomials: convolve, correlate, interp, bincount, trapezoid, gradient, poly*.

`convolve` gathers the sliding windows with one constant-index `take` and contracts them with
`matmul`; `interp` finds each point's interval by counting comparisons; `bincount` scatters
with `take_add` (under `jit` it needs a static `length`, as in JAX).
"""

from __future__ import annotations

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import TracejitValueError, UnsupportedError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._complex import conj, real_only
from tracejit.numpy._core import asarray, cast, normalize_axis, promote, shape_of
from tracejit.numpy._join import concatenate, flip, pad, slice_axis
from tracejit.numpy._linalg import matmul
from tracejit.numpy._shape import ravel, reshape
from tracejit.tracer.core import Tracer, bind

_INT64 = np.dtype(np.int64)


def _full_convolution(a, v):
    n, m = shape_of(a)[0], shape_of(v)[0]
    padded = pad(a, (m - 1, m - 1))
    windows = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    return matmul(bind("take", padded, windows, axis=0), flip(v, 0))


def convolve(a, v, mode: str = "full"):
    """`np.convolve` of 1-D sequences, modes 'full', 'same' and 'valid'.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    a, v = promote(asarray(a), asarray(v))
    if len(shape_of(a)) != 1 or len(shape_of(v)) != 1:
        raise TracejitValueError("convolve: both inputs must be 1-D")
    n, m = shape_of(a)[0], shape_of(v)[0]
    if not n or not m:
        raise TracejitValueError("convolve: inputs cannot be empty")
    if m > n:
        a, v, n, m = v, a, m, n
    full = _full_convolution(a, v)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return slice_axis(full, 0, start, start + n)
    if mode == "valid":
        return slice_axis(full, 0, m - 1, n)
    raise TracejitValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


def correlate(a, v, mode: str = "valid"):
    """`np.correlate` of 1-D sequences: `convolve(a, conj(v)[::-1])`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([3.5])
    """
    a, v = promote(asarray(a), asarray(v))
    v = conj(v)  # c_k = sum_n a[n + k] conj(v[n]), in both orders of the lengths
    if shape_of(v)[0] > shape_of(a)[0]:  # NumPy swaps the operands and reverses the result
        return flip(convolve(v, flip(a, 0), mode), 0)
    return convolve(a, flip(v, 0), mode)


def interp(x, xp, fp, left=None, right=None, period=None):
    """`np.interp`: piecewise-linear interpolation on increasing `xp` (no `period`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.interp(np.array([-1.0, 0.5, 3.0]), np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 0.0]))
    array([0., 5., 0.])
    """
    if period is not None:
        raise UnsupportedError("interp: period= is not supported")
    real_only("interp", x, xp)  # as NumPy's (complex fp is fine)
    x, xp, fp = promote(asarray(x), asarray(xp), asarray(fp), to_float=True)
    n = shape_of(xp)[0]
    xs = tuple(shape_of(x))
    if n == 1:
        out = ew.add(ew.multiply(x, 0), reshape(fp, ()))
    else:
        below = red.sum(ew.less_equal(reshape(xp, (1,) * len(xs) + (n,)),
                                      reshape(x, xs + (1,))), axis=-1)  # fmt: skip
        i = ew.clip(ew.subtract(below, 1), 0, n - 2)
        x0, x1 = bind("take", xp, i, axis=0), bind("take", xp, ew.add(i, 1), axis=0)
        f0, f1 = bind("take", fp, i, axis=0), bind("take", fp, ew.add(i, 1), axis=0)
        slope = ew.divide(ew.subtract(f1, f0), ew.subtract(x1, x0))
        out = ew.add(f0, ew.multiply(slope, ew.subtract(x, x0)))
        out = ew.where(ew.equal(x, bind("take", xp, np.int64(n - 1), axis=0)), f1, out)
    lo = bind("take", fp, np.int64(0), axis=0) if left is None else left
    hi = bind("take", fp, np.int64(n - 1), axis=0) if right is None else right
    out = ew.where(ew.less(x, bind("take", xp, np.int64(0), axis=0)), lo, out)
    return ew.where(ew.greater(x, bind("take", xp, np.int64(n - 1), axis=0)), hi, out)


def bincount(x, weights=None, minlength: int = 0, *, length=None):
    """`np.bincount`: counts (or summed weights) of each non-negative int; traced input needs
    a static `length` (values at or past it are clamped into the last bin, as `take_add` does).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.bincount(np.array([0, 1, 1, 3]))
    array([1, 2, 0, 1])
    """
    idx = asarray(x)
    if length is None:
        if isinstance(idx, Tracer):
            raise UnsupportedError(
                "bincount of a traced array has a data-dependent length: pass length=..."
            )
        length = max(int(idx.max()) + 1 if idx.size else 0, int(minlength))
    idx = cast(ravel(idx), _INT64)
    if weights is None:
        upd = ew.add(ew.multiply(idx, 0), 1)
    else:
        (upd,) = promote(ravel(asarray(weights)), to_float=True)
    zeros = np.zeros(int(length), dtype=upd.dtype)
    return bind("take_add", zeros, idx, upd, axis=0)


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """`np.trapezoid`: the trapezoidal rule along `axis`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.trapezoid(np.array([1.0, 2.0, 3.0])))
    4.0
    """
    (y,) = promote(asarray(y), to_float=True)
    ax = normalize_axis(axis, len(shape_of(y)), "trapezoid")
    n = shape_of(y)[ax]
    if x is None:
        d = dx
    else:
        xv = asarray(x)
        if len(shape_of(xv)) == 1:
            d = ew.subtract(slice_axis(xv, 0, 1, n), slice_axis(xv, 0, 0, n - 1))
            d = reshape(d, tuple(n - 1 if i == ax else 1 for i in range(len(shape_of(y)))))
        else:
            d = ew.subtract(slice_axis(xv, ax, 1, n), slice_axis(xv, ax, 0, n - 1))
    mids = ew.add(slice_axis(y, ax, 1, n), slice_axis(y, ax, 0, max(n - 1, 0)))
    return red.sum(ew.multiply(ew.multiply(mids, 0.5), d), axis=ax)


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """`np.gradient` with scalar spacings and edge_order=1: central differences inside,
    one-sided at the ends; a list for several axes, as NumPy returns.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.gradient(np.array([1.0, 4.0, 9.0, 16.0]))
    array([3., 4., 6., 7.])
    """
    (f,) = promote(asarray(f), to_float=True)
    nd = len(shape_of(f))
    axes = list(range(nd)) if axis is None else [
        normalize_axis(a, nd, "gradient") for a in np.atleast_1d(axis)]  # fmt: skip
    if edge_order != 1 or any(np.ndim(v) for v in varargs):
        raise UnsupportedError("gradient: only scalar spacings and edge_order=1")
    spacing = list(varargs) * len(axes) if len(varargs) == 1 else list(varargs)
    spacing = spacing or [1.0] * len(axes)
    outs = []
    for ax, h in zip(axes, spacing):
        n = shape_of(f)[ax]
        if n < 2:
            raise TracejitValueError("Shape of array too small to calculate a numerical gradient")
        first = ew.subtract(slice_axis(f, ax, 1, 2), slice_axis(f, ax, 0, 1))
        last = ew.subtract(slice_axis(f, ax, n - 1, n), slice_axis(f, ax, n - 2, n - 1))
        mid = ew.multiply(ew.subtract(slice_axis(f, ax, 2, n), slice_axis(f, ax, 0, n - 2)), 0.5)
        outs.append(ew.divide(concatenate([first, mid, last], ax), h))
    return outs[0] if len(outs) == 1 else outs


def polyval(p, x):
    """`np.polyval`: evaluate the polynomial with coefficients `p` (highest first), by Horner.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.polyval(np.array([3.0, 0.0, 1.0]), 5.0))
    76.0
    """
    p = asarray(p)
    out = ew.multiply(x, 0)
    for i in range(shape_of(p)[0]):
        out = ew.add(ew.multiply(out, x), bind("take", p, np.int64(i), axis=0))
    return out


def _aligned(a1, a2):
    a1, a2 = promote(ravel(asarray(a1)), ravel(asarray(a2)))
    n = max(shape_of(a1)[0], shape_of(a2)[0])
    return pad(a1, (n - shape_of(a1)[0], 0)), pad(a2, (n - shape_of(a2)[0], 0))


def polyadd(a1, a2):
    """`np.polyadd`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.polyadd(np.array([1, 2]), np.array([1, 0, 0]))
    array([1, 1, 2])
    """
    return ew.add(*_aligned(a1, a2))


def polysub(a1, a2):
    """`np.polysub`."""
    return ew.subtract(*_aligned(a1, a2))


def polymul(a1, a2):
    """`np.polymul`: the coefficients' convolution.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.polymul(np.array([1.0, 1.0]), np.array([1.0, -1.0]))
    array([ 1.,  0., -1.])
    """
    return convolve(ravel(asarray(a1)), ravel(asarray(a2)))


def polydiv(u, v):
    """`np.polydiv`: (quotient, remainder) by long division (static lengths).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [q.tolist() for q in tnp.polydiv(np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]))]
    [[1.0, -2.0], [0.0]]
    """
    u, v = promote(ravel(asarray(u)), ravel(asarray(v)), to_float=True)
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    lead = bind("take", v, np.int64(0), axis=0)
    r = u
    quotient = []
    for k in range(max(m - n + 1, 0)):
        d = ew.divide(bind("take", r, np.int64(k), axis=0), lead)
        quotient.append(reshape(d, (1,)))
        shifted = pad(ew.multiply(v, d), (k, m - n - k))
        r = ew.subtract(r, shifted)
    q = concatenate(quotient) if quotient else np.zeros(1, u.dtype)
    rem = slice_axis(r, 0, max(m - n + 1, 0), m + 1) if m >= n else r
    return q, _trim_leading_zeros(rem)


def _trim_leading_zeros(r):
    """NumPy drops the remainder's leading (near-)zeros: only possible for concrete values."""
    if isinstance(r, Tracer):
        return r
    nz = np.flatnonzero(np.abs(r) > 1e-14 * max(1.0, float(np.abs(r).max(initial=0))))
    return r[nz[0] :] if nz.size else np.zeros(1, r.dtype)


def polyder(p, m: int = 1):
    """`np.polyder`: the m-th derivative.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.polyder(np.array([1.0, 2.0, 3.0]))
    array([2., 2.])
    """
    p = asarray(p)
    for _ in range(int(m)):
        n = shape_of(p)[0] - 1
        p = ew.multiply(slice_axis(p, 0, 0, max(n, 0)), np.arange(n, 0, -1))
    return p


def polyint(p, m: int = 1, k=None):
    """`np.polyint`: the m-th antiderivative, integration constants `k` (default 0).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.polyint(np.array([3.0, 2.0]))
    array([1.5, 2. , 0. ])
    """
    (p,) = promote(asarray(p), to_float=True)
    ks = np.zeros(int(m)) if k is None else np.broadcast_to(np.asarray(k, float), (int(m),))
    for i in range(int(m)):
        n = shape_of(p)[0]
        p = concatenate([ew.divide(p, np.arange(n, 0, -1)), np.asarray([ks[i]], p.dtype)])
    return p


def unwrap(p, discont=None, axis: int = -1, *, period: float = 2 * np.pi):
    """`np.unwrap`: remove jumps larger than `discont` (default period/2) along `axis`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.unwrap(np.array([0.0, 3.0, 6.5]))
    array([0.        , 3.        , 0.21681469])
    """
    (p,) = promote(asarray(p), to_float=True)
    ax = normalize_axis(axis, len(shape_of(p)), "unwrap")
    n = shape_of(p)[ax]
    dd = ew.subtract(slice_axis(p, ax, 1, n), slice_axis(p, ax, 0, max(n - 1, 0)))
    half = period / 2
    discont = half if discont is None else max(discont, half)
    ddmod = ew.subtract(ew.remainder(ew.add(dd, half), period), half)
    ddmod = ew.where(ew.logical_and(ew.equal(ddmod, -half), ew.greater(dd, 0)), half, ddmod)
    correct = ew.where(ew.less(ew.absolute(dd), discont), 0.0, ew.subtract(ddmod, dd))
    return concatenate([slice_axis(p, ax, 0, 1), ew.add(slice_axis(p, ax, 1, n),
                                                        red.cumsum(correct, axis=ax))], ax)  # fmt: skip


__all__ = defined_here(globals())  # noqa: PLE0605
