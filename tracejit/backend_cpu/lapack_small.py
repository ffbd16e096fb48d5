"""Stacks of small matrices in the CPU program: NumPy's batched LAPACK gufuncs, in place.

Below `lapack.MIN_N` rows or columns, a loop over the stack through ctypes (backend_cpu/
lapack.py) costs more per matrix than LAPACK's work. NumPy's `np.linalg` loops over a stack in
C, through the gufuncs of `numpy.linalg._umath_linalg`; the step calls those directly, writing
into the program's buffers (`out=`): no result copied over, no wrapper, and one call for a
whole stack where a rejected matrix made `np.linalg` raise and the NumPy path retry it matrix
by matrix (ir/linalg_prims.py). A matrix LAPACK rejects gives what that path gives, NaN for
that matrix (the gufunc's own failure value; NumPy's wrappers turn it into LinAlgError),
and a singular one det 0, slogdet (0, -inf).

solve, inv, cholesky, det, slogdet, eigvalsh and svdvals run in the operands' own precision
(`?gesv` for float32 stacks, as JAX, torch and lapack.py's routines do), where `np.linalg`
computes float32 and complex64 in double and rounds the results: float64/complex128 values
are NumPy's bit for bit, float32/complex64 ones equal them to float32 rounding. Measured on
1000 32 x 32 float32 matrices (2-core AMD EPYC, loaded): cholesky 2.1 ms against 13.4
through double, inv 19 against 46 ms. eigh and svd compute in double as NumPy (`DOUBLE`):
their vectors are defined up to a sign, and these are NumPy's, bit for bit.

The gufuncs are NumPy's private module; without it (another NumPy) `into` answers None and
the NumPy path runs.

>>> import numpy as np
>>> a, out = np.array([[4.0, 2.0], [2.0, 5.0]], np.float32), np.empty((2, 2), np.float32)
>>> into("cholesky", [a])(a, [out]) or out.tolist()
[[2.0, 0.0], [1.0, 2.0]]
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit.backend_cpu import numpy_blas
from tracejit.ir.linalg_nonfinite import finite_stand_in

try:
    from numpy.linalg import _umath_linalg
except ImportError:  # a NumPy without the module: the NumPy path
    _umath_linalg = None

_GUFUNCS = {  # primitive -> (its attributes -> the gufunc's name)
    "solve": lambda: "solve",
    "inv": lambda: "inv",
    "cholesky": lambda upper=False: "cholesky_up" if upper else "cholesky_lo",
    "det": lambda: "det",
    "slogdet": lambda: "slogdet",
    "eigh": lambda: "eigh_lo",
    "eigvalsh": lambda: "eigvalsh_lo",
    "svd": lambda full_matrices: "svd_f" if full_matrices else "svd_s",
    "svdvals": lambda: "svd",
}


# NaN for a matrix holding inf or NaN (ir/linalg_nonfinite.py): ?syevd's results for one were
# NaN in part, or finite (a NaN on the diagonal of a 2 x 2 matrix)
_NONFINITE_AS_NAN = frozenset({"svd", "eigh", "eigvalsh"})
DOUBLE = frozenset({"eigh", "svd"})  # single precision computed in double, as np.linalg
_WIDER = str.maketrans("fF", "dD")


def _run(prim: str, *operands_and_outs, **attrs) -> None:
    *ins, outs = operands_and_outs
    gufunc = getattr(_umath_linalg, _GUFUNCS[prim](**attrs))
    types = "".join(x.dtype.char for x in ins) + "->" + "".join(o.dtype.char for o in outs)
    if prim in DOUBLE:
        types = types.translate(_WIDER)
    bad = None
    if prim in _NONFINITE_AS_NAN:  # ?gesdd can loop forever on inf: zeros in, NaN out
        ins[0], bad = finite_stand_in(ins[0], lower=prim != "svd")  # eigh reads the lower
    with numpy_blas.one_thread(), np.errstate(all="ignore"):  # NaN, not a warning
        gufunc(*ins, signature=types, out=tuple(outs))
    for o in outs if bad is not None else ():
        o[bad] = np.nan


def into(prim: str, operands: list[np.ndarray]):
    """`fn(*operands, outs, **attrs)` writing primitive `prim`'s results into `outs` through
    NumPy's gufunc, or None (a primitive without one here, an empty matrix, no module)."""
    if prim not in _GUFUNCS or _umath_linalg is None or 0 in operands[0].shape[-2:]:
        return None
    return functools.partial(_run, prim)


__all__ = ["DOUBLE", "into"]
