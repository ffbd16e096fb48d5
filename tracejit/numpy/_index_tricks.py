"""`r_`, `c_`, `s_`, `index_exp`, `mgrid`, `ogrid`: NumPy's index-expression helpers.

`r_[a, b, 1:3]` and `c_[a, b]` concatenate traced values too; slices in them are static
ranges (`1:3` is `arange`, `0:1:5j` is `linspace`). `s_`, `index_exp`, `mgrid` and `ogrid`
only need static numbers, so they are NumPy's own objects.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.numpy._core import aval_of, cast, shape_of
from tracejit.numpy._creation import asarray
from tracejit.numpy._join import concatenate
from tracejit.numpy._shape import reshape

s_, index_exp, mgrid, ogrid = np.s_, np.index_exp, np.mgrid, np.ogrid


def _slice_range(s: slice) -> np.ndarray:
    step = 1 if s.step is None else s.step
    start = 0 if s.start is None else s.start
    if isinstance(step, complex):
        return np.linspace(start, s.stop, int(abs(step)))
    return np.arange(start, s.stop, step)


class _Concatenator:
    """`r_` (along axis 0, 1-D items stay rows) or `c_` (1-D items become columns)."""

    def __init__(self, axis: int, columns: bool):
        self.axis = axis
        self.columns = columns

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin = self.axis, 1
        if items and isinstance(items[0], str):
            axis, ndmin = self._directive(items.pop(0), axis)
        values = [_slice_range(i) if isinstance(i, slice) else i for i in items]
        if not values:
            return np.zeros(0)
        dt = dtypes.result_type(*[aval_of(v) for v in values])[0]
        arrays = [self._shaped(cast(asarray(v), dt), ndmin) for v in values]
        return concatenate(arrays, axis)

    def _directive(self, text: str, axis: int) -> tuple[int, int]:
        if text in ("r", "c"):
            raise UnsupportedError(f"the matrix directive {text!r} of r_/c_ is not supported")
        parts = [int(p) for p in text.split(",")]
        if len(parts) > 2:
            raise UnsupportedError("r_/c_: only 'axis' and 'axis,ndmin' directives")
        return parts[0], parts[1] if len(parts) > 1 else 1

    def _shaped(self, x, ndmin: int):
        shape = tuple(shape_of(x))
        if self.columns:
            return reshape(x, (-1, 1) if len(shape) < 2 else shape)
        if len(shape) < ndmin:
            return reshape(x, (1,) * (ndmin - len(shape)) + shape)
        return x


r_ = _Concatenator(0, columns=False)
c_ = _Concatenator(-1, columns=True)

__all__ = ["c_", "index_exp", "mgrid", "ogrid", "r_", "s_"]
