"""The `eig` primitive: eigenvalues and right eigenvectors of general square matrices.

`eig(a)` takes a stack `(..., n, n)` (float32/64 or complex64/128) and returns complex
eigenvalues `(..., n)` and unit eigenvectors `(..., n, n)` (columns), always complex, as
`jax.numpy.linalg.eig`. The implementation is NumPy's (LAPACK geev), run as a host step in
compiled programs like the other LAPACK primitives (ir/linalg_prims.py). A matrix LAPACK
rejects (non-finite entries) gives NaN, as JAX.

Forward only, as the issue asks: differentiating through `eig` raises UnsupportedError.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import defvjp
from tracejit.ir.fft_prims import complex_dtype
from tracejit.ir.linalg_prims import LinAlgShapeError
from tracejit.ir.primitives import OPAQUE, register

_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _eig_rule(avals):
    ((shape, dt, _),) = avals
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise LinAlgShapeError(f"eig: needs square matrices in the last two axes, got {shape}")
    if np.dtype(dt) not in _DTYPES:
        raise UnsupportedError(f"eig needs float32/64 or complex64/128 operands, got {dt}")
    c = complex_dtype(dt)
    return [(tuple(shape[:-1]), c, False), (tuple(shape), c, False)]


def _eig_impl(a):
    c = complex_dtype(a.dtype)
    if not np.isfinite(a).all():
        bad = ~np.isfinite(a).all(axis=(-2, -1))
        a = np.where(bad[..., None, None], 0, a)
        w, v = np.linalg.eig(a)
        w[bad], v[bad] = np.nan, np.nan
    else:
        w, v = np.linalg.eig(a)
    return w.astype(c), v.astype(c)


register("eig", OPAQUE, _eig_rule, _eig_impl, multiple_results=True)
dtypes.COMPLEX_HOST_PRIMS.add("eig")


@defvjp("eig")
def _eig_vjp(e, cts, a, *, out):
    raise UnsupportedError(
        "tnp.linalg.eig / eigvals are not differentiable in tracejit (forward only); for "
        "symmetric matrices use eigh, or wrap the operand in tnp.stop_gradient"
    )


__all__: list[str] = []
