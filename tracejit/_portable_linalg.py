"""Cholesky and QR factors from correctly rounded operations only, for tracejit.random.

`multivariate_normal` and `orthogonal` factor a matrix: with the library's Cholesky or QR
(NumPy's LAPACK eagerly, scipy-openblas32 in a compiled CPU program, cuSOLVER on a GPU) the
same key gave draws a few ulp apart on each path, each library blocking and ordering its
sums its own way. The factorizations here are loops over columns (`lax.fori_loop`, one
compiled loop, not unrolled) of products, quotients and square roots, whose sums add left
to right (`_portable_math.sum_in_order`), so they are the same bits eagerly, compiled and on
a GPU (as `_portable_math.py` says why), and as accurate as the textbook algorithms:

- `cholesky(a)`: the lower factor, column by column (Cholesky-Crout), reading `a`'s lower
  triangle as NumPy's; a matrix that is not positive definite (a pivot's square root of
  a negative number) gives NaN, the whole matrix, as tracejit's `linalg.cholesky` and JAX's.
- `gram_schmidt_q(z)`: the Q of the QR of a tall `z` (..., n, m), n >= m, whose R has a
  positive diagonal: classical Gram-Schmidt with a second orthogonalization pass ("twice is
  enough", Giraud et al. 2005), so Q is orthonormal to working precision for a full-rank
  `z`. That is the unique Q Mezzadri's Haar construction asks for (a Householder QR's Q with
  the signs of R's diagonal moved into it).

O(n^3) elementwise work per matrix over n loop turns: meant for the samplers' covariance and
random matrices, not as a general solver.
"""

from __future__ import annotations

from tracejit import lax
from tracejit import numpy as tnp
from tracejit._portable_math import sum_in_order


def _column(x, j):
    """`x[..., :, j]` for a traced `j`."""
    return tnp.take(x, j, axis=-1)


def cholesky(a):
    """The lower Cholesky factor of the stack `a` (..., n, n) (float), in a fixed order."""
    a = tnp.asarray(a)
    n = a.shape[-1]
    rows = tnp.arange(n)

    def body(j, low):
        row_j = tnp.take(low, j, axis=-2)  # L[j, :], zero from column j on
        # s_i = sum_{k < j} L[i, k] L[j, k], in order (the zeros of k >= j add nothing)
        s = sum_in_order(tnp.multiply(low, row_j[..., None, :]), axis=-1)
        a_col = _column(a, j)
        pivot = tnp.sqrt(tnp.subtract(tnp.take(a_col, j, axis=-1), tnp.take(s, j, axis=-1)))
        below = tnp.divide(tnp.subtract(a_col, s), pivot[..., None])
        col = tnp.where(rows > j, below, tnp.where(rows == j, pivot[..., None], 0.0))
        return tnp.where(rows == j, col[..., :, None], low)  # column j set

    low = lax.fori_loop(0, n, body, tnp.zeros_like(a))
    bad = tnp.any(tnp.isnan(tnp.diagonal(low, axis1=-2, axis2=-1)), axis=-1)
    return tnp.where(bad[..., None, None], tnp.nan, low)


def gram_schmidt_q(z):
    """The orthonormal Q (..., n, m) of the QR of the tall stack `z` (n >= m) with R's
    diagonal positive, by classical Gram-Schmidt applied twice to each column."""
    z = tnp.asarray(z)
    m = z.shape[-1]
    cols = tnp.arange(m)

    def project_out(q, v, j):
        """v less its projections on q's columns before j, sums in order."""
        before = (cols < j).astype(z.dtype)
        coef = tnp.multiply(sum_in_order(tnp.multiply(q, v[..., :, None]), axis=-2), before)
        return tnp.subtract(v, sum_in_order(tnp.multiply(q, coef[..., None, :]), axis=-1))

    def body(j, q):
        v = _column(z, j)
        v = project_out(q, project_out(q, v, j), j)
        norm = tnp.sqrt(sum_in_order(tnp.multiply(v, v), axis=-1))
        return tnp.where(cols == j, tnp.divide(v, norm[..., None])[..., :, None], q)

    return lax.fori_loop(0, m, body, tnp.zeros_like(z))


__all__ = ["cholesky", "gram_schmidt_q"]
