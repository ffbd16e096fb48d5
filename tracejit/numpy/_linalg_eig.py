"""`tnp.linalg.eig`, `tnp.linalg.eigvals` (the `eig` primitive, ir/linalg_eig.py: always
complex, as JAX; eigenvalue gradients, eigenvector ones on request) and `tnp.roots` (eigenvalues of the companion matrix, as
NumPy and JAX)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import TracejitValueError
from tracejit.tracer.core import Tracer, bind

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _operand(a):
    a = tnp.asarray(a)
    if a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
        a = tnp.astype(a, np.float32 if a.dtype.kind == "f" else np.float64)
    return a  # the eig primitive's rule checks the shape


def eig(a, *, enable_eigvec_derivs: bool = False):
    """`np.linalg.eig`: (eigenvalues, eigenvectors), complex even for real spectra (JAX).

    Eigenvalues are differentiable; eigenvectors only with `enable_eigvec_derivs=True`
    (JAX's flag of `lax.linalg.eig`): their derivative, under LAPACK's normalization (unit
    norm, largest-magnitude component real), holds only for distinct eigenvalues and a
    unique largest component, which tracejit cannot check.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.eig(np.array([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
    array([0.+1.j, 0.-1.j])
    """
    w, v = bind("eig", _operand(a), eigvec_derivs=bool(enable_eigvec_derivs))
    return EigResult(w, v)


def eigvals(a):
    """`np.linalg.eigvals`: the eigenvalues of `eig`, computing no eigenvectors (but to
    differentiate them).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.eigvals(np.array([[2.0, 0.0], [0.0, 3.0]]))
    array([2.+0.j, 3.+0.j])
    """
    return bind("eigvals", _operand(a))


def roots(p, *, strip_zeros: bool = True):
    """`np.roots`: the roots of the polynomial with coefficients `p` (highest power first),
    complex. Leading zeros are stripped for concrete `p` (as NumPy); traced `p` keeps its
    length (pass strip_zeros=False, as JAX asks), and trailing zeros give zero roots.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> np.sort_complex(tnp.roots(np.array([1.0, -3.0, 2.0])))
    array([1.+0.j, 2.+0.j])
    """
    p = tnp.asarray(p)
    if tnp.ndim(p) != 1:
        raise TracejitValueError("Input must be a rank-1 array.")
    if strip_zeros and not isinstance(p, Tracer):
        nz = np.flatnonzero(np.asarray(p))
        if nz.size == 0:
            return np.zeros(0, np.complex128)
        trailing = len(p) - 1 - nz[-1]
        p = p[nz[0] : nz[-1] + 1]
        found = roots(p, strip_zeros=False)
        return tnp.concatenate([found, tnp.zeros(trailing, found.dtype)])
    n = tnp.shape(p)[0] - 1
    if n < 1:
        return tnp.zeros(0, np.complex128)
    p = tnp.astype(p, np.float64) if p.dtype.kind not in "fc" else p
    first_row = tnp.divide(tnp.negative(p[1:]), p[0])
    companion = tnp.concatenate([first_row[None, :], tnp.eye(n - 1, n, dtype=p.dtype)], axis=0)
    return eigvals(companion)


__all__ = ["eig", "eigvals"]
