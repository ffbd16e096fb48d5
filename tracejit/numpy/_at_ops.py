"""`x.at[i].multiply/divide/min/max(v)`: functional updates that combine repeated indices.

Repeated indices combine all their updates (`x.at[[0, 0]].multiply([2, 3])` multiplies by 6),
as `np.multiply.at` does. Concrete positions are grouped while tracing: one gather collects
each position's updates (padded with the operation's identity), one reduction combines them.
Traced positions compare every update with every position (memory: size of x times the
number of updates), as they cannot be grouped while tracing.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._core import constant, innermost_trace, shape_of
from tracejit.numpy._creation import iota
from tracejit.numpy._indexing import IndexUpdate
from tracejit.numpy._join import concatenate
from tracejit.numpy._shape import reshape
from tracejit.tracer.core import bind

_COMBINE = {"multiply": (red.prod, ew.multiply), "min": (red.min, ew.minimum),
            "max": (red.max, ew.maximum)}  # fmt: skip


def _identity(how: str, dtype: np.dtype):
    if how == "multiply":
        return 1
    if dtype == np.bool_:
        return how == "min"
    if dtype.kind == "f":
        return np.inf if how == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if how == "min" else info.min


def combine_at(flat, positions, updates, how: str):
    """`flat` with each position combined (`how`: multiply, min, max) with its updates."""
    reduce, binary = _COMBINE[how]
    ident = _identity(how, np.dtype(flat.dtype))
    if isinstance(positions, np.ndarray):
        return _grouped(flat, positions, updates, ident, reduce, binary)
    n, m = shape_of(flat)[0], shape_of(positions)[0]
    trace = innermost_trace([flat, positions, updates])
    rows = iota((n, m), np.int64, 0, trace)
    hits = ew.equal(reshape(positions, (1, m)), rows)
    fill = constant(ident, flat.dtype, False, trace)
    combined = reduce(ew.where(hits, reshape(updates, (1, m)), fill), axis=1)
    return binary(flat, combined)


def _grouped(flat, positions, updates, ident, reduce, binary):
    m = positions.shape[0]
    if m == 0:
        return flat
    uniq, inverse, counts = np.unique(positions, return_inverse=True, return_counts=True)
    order = np.argsort(inverse, kind="stable")
    slots = np.full((len(uniq), int(counts.max())), m, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for g, (s, c) in enumerate(zip(starts, counts)):
        slots[g, :c] = order[s : s + c]
    trace = innermost_trace([flat, updates])
    padded = concatenate([updates, reshape(constant(ident, flat.dtype, False, trace), (1,))])
    combined = reduce(bind("take", padded, slots, axis=0), axis=1)
    current = bind("take", flat, uniq, axis=0)
    return IndexUpdate(flat, uniq).set(binary(current, combined))


def divide_updates(updates):
    if np.dtype(updates.dtype).kind != "f":
        raise UnsupportedError("x.at[i].divide(v) needs a float array; integer division at "
                               "an index is not supported")  # fmt: skip
    return ew.divide(1.0, updates)
