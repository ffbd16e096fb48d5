"""`ConstArray`: the NumPy array jit returns and `tnp` creation functions make, with JAX's manners.

A thin `np.ndarray` subclass: `x.block_until_ready()` works on it, and `tracejit.numpy`
installs `x.at[i].add(v)` and traced-index `x[i]` on it (numpy/_const_array.py). It sits at
the top of the package, beside `pytree.py`: jit, the transformations and the CPU executor
(which creates its outputs as this class) use it without importing the NumPy layer or the
tracer. Everything else is NumPy's:
arithmetic and NumPy functions on a ConstArray return plain `np.ndarray`s.

>>> import numpy as np
>>> ConstArray.of(np.ones(2)).block_until_ready()
array([1., 1.])
"""

from __future__ import annotations

import numpy as np


class ConstArray(np.ndarray):
    """A NumPy array with `.block_until_ready()` (and, from tnp, `.at[...]` and traced
    indexing; see the module doc)."""

    _tracejit_plain_array = True  # jit takes and returns it as the plain array it views

    @staticmethod
    def of(x):
        """`x` as a ConstArray view when it is a plain NumPy array; anything else unchanged."""
        return x.view(ConstArray) if type(x) is np.ndarray else x

    def block_until_ready(self):
        """JAX's `x.block_until_ready()`: a host array is complete when a call returns, so
        this returns `self` at once (CUDA results wait in `tj.block_until_ready(tree)`)."""
        return self

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        arr = arr.view(np.ndarray) if isinstance(arr, np.ndarray) else np.asarray(arr)
        return arr[()] if return_scalar else arr

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __reduce__(self):  # pickles as a plain array
        return self.view(np.ndarray).__reduce__()


__all__ = ["ConstArray"]
