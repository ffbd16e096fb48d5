"""`ConstArray`: the NumPy array `tnp` creation functions return, with JAX's array manners.

`tnp.zeros(n)`, `tnp.asarray(np_table)`, `tnp.arange(n)` ... return NumPy arrays (they are
constants inside `jit`), but as this thin subclass, so that two JAX habits work on them:
`x.at[i].add(v)` (a functional update, traced when `i` or `v` is), `x[i]` with a traced
index (a gather; a plain NumPy array cannot accept a traced index) and
`x.block_until_ready()`. `jit` returns its host (CPU, NumPy-device) results as this too. Everything else is
NumPy's: arithmetic and NumPy functions on a ConstArray return plain `np.ndarray`s.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.zeros(3).at[1].add(2.0)
array([0., 2., 0.])
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit.tracer.core import Tracer


def _has_tracer(index) -> bool:
    items = index if isinstance(index, (tuple, list)) else (index,)
    return any(isinstance(i, Tracer) or isinstance(i, (tuple, list)) and _has_tracer(i)
               for i in items)  # fmt: skip


class ConstArray(np.ndarray):
    """A NumPy array with `.at[...]` and traced-index `__getitem__` (see the module doc)."""

    _tracejit_plain_array = True  # jit takes and returns it as the plain array it views

    @property
    def at(self):
        from tracejit.numpy._indexing import AtIndexer

        return AtIndexer(self.view(np.ndarray))

    def __getitem__(self, index):
        if _has_tracer(index):
            from tracejit.numpy._indexing import getitem

            return getitem(self.view(np.ndarray), index)
        return super().__getitem__(index)

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


def const_array(x):
    """`x` as a ConstArray view when it is a plain NumPy array; anything else unchanged."""
    return x.view(ConstArray) if type(x) is np.ndarray else x


def returns_const_array(fn):
    """Decorate a creation function so its NumPy results are ConstArrays."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(const_array(o) for o in out)
        return const_array(out)

    return wrapper
