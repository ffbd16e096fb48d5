"""Complex numbers in tracejit.numpy: `real`, `imag`, `conj`, `angle`, `iscomplex`, `isreal`,
and `abs` of complex values, built from the `real`/`imag`/`conj`/`complex` primitives
(tracejit/ir/complex_prims.py) and real arithmetic, so they trace, differentiate (JAX's
convention) and compile on both backends. The elementary functions of complex values are in
_complex_math.py, their order (max, sort, ...) in _complex_order.py.

>>> import numpy as np, tracejit as tj, tracejit.numpy as tnp
>>> z = np.array([3 + 4j], np.complex64)
>>> tj.jit(lambda z: (tnp.abs(z), tnp.real(z * z), tnp.conj(z)))(z)
(array([5.], dtype=float32), array([-7.], dtype=float32), array([3.-4.j], dtype=complex64))
>>> tj.grad(lambda z: tnp.abs(z) ** 2)(np.complex128(3 + 4j))  # JAX's: df/dx - i df/dy
array(6.-8.j)
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import TracejitTypeError
from tracejit.ir import (
    complex_prims,
    dtypes,
)
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._core import aval_of, promote
from tracejit.numpy._creation import ones_like, zeros_like
from tracejit.tracer.core import Tracer, bind


def _is_complex(x) -> bool:
    return dtypes.is_complex(aval_of(x)[0])


def _part(prim: str, x):
    """bind(prim, x) when tracing, NumPy's own result on a concrete array."""
    if isinstance(x, Tracer):
        return bind(prim, x)
    return {"real": np.real, "imag": np.imag, "conj": np.conj}[prim](x)


def real(x):
    """`np.real`: the real part (a real value itself).

    >>> import tracejit.numpy as tnp
    >>> float(tnp.real(2.0)), float(tnp.real(2 + 3j))
    (2.0, 2.0)
    """
    (x,) = promote(x)
    return _part("real", x) if _is_complex(x) else x


def imag(x):
    """`np.imag`: the imaginary part (zero for a real value).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.imag(np.ones(2)), float(tnp.imag(2 + 3j))
    (array([0., 0.]), 3.0)
    """
    (x,) = promote(x)
    return _part("imag", x) if _is_complex(x) else zeros_like(x)


def conj(x):
    """`np.conj`: the complex conjugate (a real value itself)."""
    (x,) = promote(x)
    return _part("conj", x) if _is_complex(x) else x


conjugate = conj


def angle(z, deg: bool = False):
    """`np.angle`: the argument, arctan2(imag, real) (180/0 for reals with deg=True).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.angle(np.array([-2.0, 3.0]))
    array([3.14159265, 0.        ])
    """
    (z,) = promote(z, to_float=True)
    out = ew.arctan2(imag(z), real(z))
    return ew.multiply(out, 180.0 / np.pi) if deg else out


def iscomplex(x):
    """`np.iscomplex`: a nonzero imaginary part.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.iscomplex(np.array([1.0, 1 + 1j]))
    array([False,  True])
    """
    (x,) = promote(x)
    if _is_complex(x):
        return ew.not_equal(imag(x), 0)
    return zeros_like(x, dtype=np.bool_)


def isreal(x):
    """`np.isreal`: a zero imaginary part.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.isreal(np.ones(2))
    array([ True,  True])
    """
    (x,) = promote(x)
    if _is_complex(x):
        return ew.equal(imag(x), 0)
    return ones_like(x, dtype=np.bool_)


def complex_abs(z):
    """|z| = hypot(real, imag) (no overflow for large parts), real-valued."""
    from tracejit.numpy._math import hypot

    return hypot(real(z), imag(z))


def real_only(name: str, *xs) -> None:
    """NumPy's TypeError for a ufunc without complex loops (fabs, hypot, signbit, ...), where
    computing on complex values would give a meaningless number."""
    for x in xs:
        if _is_complex(x):
            raise TracejitTypeError(
                f"'{name}' does not take complex values (NumPy raises TypeError too)"
            )


def make_complex(re, im):
    """re + i im, keeping infinite parts (re + 1j * im would make NaNs of them)."""
    if isinstance(re, Tracer) or isinstance(im, Tracer):
        re, im = promote(re, im)
        return bind("complex", re, im)
    return complex_prims._complex_impl(np.asarray(re), np.asarray(im))


__all__ = ["angle", "conj", "conjugate", "imag", "iscomplex", "isreal", "real"]
