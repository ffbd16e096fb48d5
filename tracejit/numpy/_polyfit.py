"""`polyfit` (least squares on a scaled Vandermonde matrix, as NumPy) and `sort_complex`."""

from __future__ import annotations

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import TracejitTypeError, TracejitValueError, UnsupportedError


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    """`np.polyfit`: the degree-`deg` coefficients (highest power first) minimizing the
    (weighted) squared error, one column of coefficients per column of `y`; differentiable
    in x, y and w. `full` and `cov` are not offered.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> np.round(tnp.polyfit(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0]), 1), 12)
    array([2., 1.])
    """
    if full or cov:
        raise UnsupportedError("polyfit: full=True and cov=True are not offered")
    deg = int(deg)
    if deg < 0:
        raise TracejitValueError("expected deg >= 0")
    x, y = tnp.asarray(x), tnp.asarray(y)
    if tnp.ndim(x) != 1 or tnp.ndim(y) not in (1, 2) or tnp.shape(y)[0] != tnp.shape(x)[0]:
        raise TracejitTypeError(
            f"polyfit: expected x of shape (n,) and y of shape (n,) or (n, k), got "
            f"{tnp.shape(x)} and {tnp.shape(y)}"
        )
    dt = np.result_type(x.dtype, y.dtype, np.float64 if x.dtype.kind in "biu" else x.dtype)
    x, y = tnp.astype(x, dt), tnp.astype(y, dt)
    n = tnp.shape(x)[0]
    if rcond is None:
        rcond = n * np.finfo(dt).eps
    lhs, rhs = tnp.vander(x, deg + 1), y
    if w is not None:
        w = tnp.astype(tnp.asarray(w), dt)
        lhs = tnp.multiply(lhs, w[:, None])
        rhs = tnp.multiply(rhs, w if tnp.ndim(rhs) == 1 else w[:, None])
    scale = tnp.sqrt(tnp.sum(tnp.square(lhs), axis=0))
    scale = tnp.where(tnp.equal(scale, 0), 1.0, scale)
    c = tnp.linalg.lstsq(tnp.divide(lhs, scale), rhs, rcond=rcond)[0]
    return tnp.divide(c, scale if tnp.ndim(c) == 1 else scale[:, None])


def sort_complex(a, /):
    """`np.sort_complex`: sorted by real part, then imaginary part, as complex.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.sort_complex(np.array([1 + 2j, 1 - 1j, -3 + 0j]))
    array([-3.+0.j,  1.-1.j,  1.+2.j])
    """
    a = tnp.asarray(a)
    dt = np.result_type(a.dtype, np.complex64)
    order = tnp.lexsort((tnp.imag(a), tnp.real(a)), axis=-1)
    return tnp.astype(tnp.take_along_axis(a, order, axis=-1), dt)


__all__ = ["polyfit", "sort_complex"]
