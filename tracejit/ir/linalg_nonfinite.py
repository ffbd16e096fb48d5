"""NaN for each matrix of a stack that holds inf or NaN, as JAX gives: the library runs on
zeros in its place, so it neither hangs (LAPACK's ?gesdd) nor returns finite values for it
(cuSOLVER's svd on an H100), nor rejects it (NumPy's eigh raises LinAlgError).

>>> a = np.stack([np.eye(2), [[1.0, np.inf], [0.0, 1.0]]])
>>> clean, bad = finite_stand_in(a)
>>> bad.tolist(), clean[1].tolist()
([False, True], [[0.0, 0.0], [0.0, 0.0]])
>>> nan_where(bad, np.linalg.eigvalsh(clean)).tolist()
[[1.0, 1.0], [nan, nan]]
"""

from __future__ import annotations

import numpy as np


def finite_stand_in(a, xp=np, *, lower: bool = False):
    """`(a, None)`, or where a matrix of the stack `a` may hold inf or NaN (in its `lower`
    triangle alone, which eigh reads), `(a with zeros for those matrices, their mask)`:
    `nan_where` then sets their results to NaN, as JAX. NumPy's LAPACK ?gesdd never returns
    on some such matrices (np.linalg.svd of [[3, inf, 0], [inf, 3, 0], [0, 0, 3]] hangs);
    cuSOLVER's svd returned finite vectors for it (an H100). On CuPy the mask is always
    made: asking whether any is bad would wait."""
    finite = xp.isfinite(a)
    if lower:  # the strictly upper triangle counts as finite (made on the device: no copy)
        rows, cols = xp.arange(a.shape[-2]), xp.arange(a.shape[-1])
        finite = xp.where(rows.reshape(-1, 1) < cols, True, finite)
    bad = ~finite.all(axis=(-2, -1))
    if xp is np and not bad.any():
        return a, None
    zero = xp.zeros((), a.dtype)  # a's dtype: a bare 0 might promote (a slower library call)
    return xp.where(bad.reshape(bad.shape + (1, 1)), zero, a), bad


def nan_where(bad, result, xp=np):
    """`result` of a stack (one result per matrix: leading axes `bad.shape`), NaN where `bad`."""
    if bad is None:
        return result
    mask = bad.reshape(bad.shape + (1,) * (result.ndim - bad.ndim))
    return xp.where(mask, np.nan, result).astype(result.dtype, copy=False)


__all__ = ["finite_stand_in", "nan_where"]
