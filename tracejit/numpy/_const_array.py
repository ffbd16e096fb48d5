"""`ConstArray`: the NumPy array `tnp` creation functions return, with JAX's array manners.

`tnp.zeros(n)`, `tnp.asarray(np_table)`, `tnp.arange(n)` ... return NumPy arrays (they are
constants inside `jit`), but as this thin subclass, so that two JAX habits work on them:
`x.at[i].add(v)` (a functional update, traced when `i` or `v` is), `x[i]` with a traced
index (a gather; a plain NumPy array cannot accept a traced index) and
`x.block_until_ready()`. `jit` returns its host (CPU, NumPy-device) results as this too. The
class is `tracejit.const_array.ConstArray`; this module installs its indexing.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.zeros(3).at[1].add(2.0)
array([0., 2., 0.])
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit.const_array import ConstArray
from tracejit.numpy._core import _has_tracer


def _at(self):
    from tracejit.numpy._indexing import AtIndexer

    return AtIndexer(self.view(np.ndarray))


def _getitem(self, index):
    if _has_tracer(index if isinstance(index, (tuple, list)) else (index,)):
        from tracejit.numpy._indexing import getitem

        return getitem(self.view(np.ndarray), index)
    return np.ndarray.__getitem__(self, index)


# installed here: the class is shared with jit and the executor; the indexing is tnp's
ConstArray.at = property(_at)
ConstArray.__getitem__ = _getitem


const_array = ConstArray.of


def returns_const_array(fn):
    """Decorate a creation function so its NumPy results are ConstArrays."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(const_array(o) for o in out)
        return const_array(out)

    return wrapper
