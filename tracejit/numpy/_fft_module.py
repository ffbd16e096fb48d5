"""`tracejit.numpy.fft`: the module object, its helpers and the transforms.

`fftfreq`/`rfftfreq` are NumPy's (static sizes); `fftshift`/`ifftshift` are rolls, so they
trace and differentiate. The transforms (fft, rfft, ...) are in _fft_transforms.py.
"""

from __future__ import annotations

import sys
import types

import numpy as np

from tracejit.numpy._core import asarray, normalize_axes, shape_of
from tracejit.numpy._fft_transforms import TRANSFORMS
from tracejit.numpy._join import roll


def _shift(x, axes, sign: int):
    x = asarray(x)
    axes = normalize_axes(axes, len(shape_of(x)), "fftshift")
    shifts = [sign * (shape_of(x)[a] // 2) for a in axes]
    return roll(x, shifts, axes) if axes else x


def fftshift(x, axes=None):
    """`np.fft.fftshift`: move the zero frequency to the centre.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.fft.fftshift(np.arange(5))
    array([3, 4, 0, 1, 2])
    """
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """`np.fft.ifftshift`: the inverse of `fftshift`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.fft.ifftshift(np.array([3, 4, 0, 1, 2]))
    array([0, 1, 2, 3, 4])
    """
    return _shift(x, axes, -1)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None):
    """`np.fft.fftfreq` (NumPy's array: it depends only on static numbers)."""
    out = np.fft.fftfreq(n, d)
    return out if dtype is None else out.astype(dtype)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None):
    """`np.fft.rfftfreq` (NumPy's array)."""
    out = np.fft.rfftfreq(n, d)
    return out if dtype is None else out.astype(dtype)


fft = types.ModuleType("tracejit.numpy.fft", __doc__)
for _fn in (fftshift, ifftshift, fftfreq, rfftfreq, *TRANSFORMS):
    setattr(fft, _fn.__name__, _fn)
fft.__all__ = sorted(_fn.__name__ for _fn in (fftshift, ifftshift, fftfreq, rfftfreq, *TRANSFORMS))
sys.modules.setdefault(fft.__name__, fft)

__all__ = ["fft"]
