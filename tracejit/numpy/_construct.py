"""Building arrays from others: diag, meshgrid, select, choose, copy, index helpers, windows.

Index helpers whose answer depends only on shapes (`tril_indices`, `diag_indices`, `ix_` of
concrete arrays, windows like `hanning`) return NumPy arrays, as NumPy does: inside `jit` they
are constants. Functions of traced values trace.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit.errors import ShapeError, TracejitTypeError, TracejitValueError, UnsupportedError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._core import asarray, broadcast_all, cast, promote, shape_of
from tracejit.numpy._creation import linspace
from tracejit.numpy._manip import rearrange
from tracejit.numpy._reductions import any as any_
from tracejit.numpy._shape import broadcast_to, diagonal, ravel, reshape
from tracejit.tracer.core import Tracer

_INT64 = np.dtype(np.int64)


def diag(v, k: int = 0):
    """`np.diag`: the k-th diagonal of a 2-D array, or a 2-D array with `v` on it.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.diag(np.array([1, 2]), 1)
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    x = asarray(v)
    nd = len(shape_of(x))
    if nd == 2:
        return diagonal(x, k)
    if nd != 1:
        raise ShapeError(f"diag: input must be 1-d or 2-d, got shape {shape_of(x)}")
    return rearrange(x, lambda i: np.diag(i, k), fill=0)


def diagflat(v, k: int = 0):
    """`np.diagflat`: the flattened input on the k-th diagonal.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.diagflat(np.array([[1, 2]])).shape
    (2, 2)
    """
    return diag(ravel(asarray(v)), k)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """`np.meshgrid`: coordinate arrays, 'xy' (Cartesian) or 'ij' (matrix) indexing.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [g.shape for g in tnp.meshgrid(np.arange(3), np.arange(2))]
    [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise TracejitValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [ravel(asarray(x)) for x in xi]
    n = len(xs)
    shapes = []
    for i, x in enumerate(xs):
        s = [1] * n
        s[i] = shape_of(x)[0]
        if indexing == "xy" and n > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        shapes.append(tuple(s))
    grids = [reshape(x, s) for x, s in zip(xs, shapes)]
    if sparse:
        return tuple(grids)
    full = np.broadcast_shapes(*shapes)
    return tuple(broadcast_to(g, full) for g in grids)


def copy(a, order: str = "K"):
    """`np.copy`: a traced value is immutable, so it is its own copy.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> x = np.ones(2); tnp.copy(x) is x
    False
    """
    x = asarray(a)
    return x if isinstance(x, Tracer) else np.array(x, copy=True)


def select(condlist, choicelist, default=0):
    """`np.select`: the choice of the first true condition, `default` where none holds.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> x = np.arange(5)
    >>> tnp.select([x < 2, x > 3], [x, x * 10], default=-1)
    array([ 0,  1, -1, -1, 40])
    """
    if len(condlist) != len(choicelist):
        raise TracejitValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise TracejitValueError("select with an empty condition list is not possible")
    # one dtype for all, NumPy's result_type of the choices and the default (Python scalars
    # weak): select([c], [uint8], 0) is uint8, not the int64 of a where chain over the 0
    *choices, out = promote(*choicelist, default)
    for cond, choice in reversed(list(zip(condlist, choices))):
        if asarray(cond).dtype != np.bool_:
            raise TracejitTypeError("invalid entry in condlist: should be boolean ndarray")
        out = ew.where(cond, choice, out)
    return out


def choose(a, choices, out=None, mode: str = "raise"):
    """`np.choose`: element i comes from `choices[a[i]]`; indices are clipped ('clip') or
    wrapped ('wrap'); 'raise' clips traced indices, as compiled code cannot raise.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.choose(np.array([0, 1, 0]), [np.array([1, 2, 3]), np.array([10, 20, 30])])
    array([ 1, 20,  3])
    """
    if out is not None:
        raise UnsupportedError("choose(..., out=...) writes in place; use the result")
    idx = asarray(a)
    n = len(choices)
    if not isinstance(idx, Tracer) and mode == "raise" and ((idx < 0) | (idx >= n)).any():
        raise TracejitValueError("invalid entry in choice array")
    idx = ew.remainder(idx, n) if mode == "wrap" else ew.clip(idx, 0, n - 1)
    result = None
    for j, choice in enumerate(choices):
        result = choice if result is None else ew.where(ew.equal(idx, j), choice, result)
    shape = np.broadcast_shapes(tuple(shape_of(idx)), *[tuple(shape_of(c)) for c in choices])
    return broadcast_to(promote(result)[0], shape)


def piecewise(x, condlist, funclist, *args, **kw):
    """`np.piecewise`: `funclist[i](x)` where `condlist[i]` holds (later ones win), an extra
    last function or value for where none holds, and 0 otherwise.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.piecewise(np.array([-1.0, 2.0]), [np.array([True, False])], [lambda v: -v, 5.0])
    array([1., 5.])
    """
    x = asarray(x)
    if isinstance(condlist, (Tracer, np.ndarray)) and len(shape_of(condlist)) == len(shape_of(x)):
        condlist = [condlist]
    condlist = [asarray(c) for c in condlist]
    if len(funclist) == len(condlist) + 1:
        none = ew.logical_not(functools.reduce(ew.logical_or, condlist))
        condlist = condlist + [none]
    elif len(funclist) != len(condlist):
        raise TracejitValueError(
            f"with {len(condlist)} condition(s), either {len(condlist)} or {len(condlist) + 1} "
            "functions are expected"
        )
    out = ew.multiply(x, 0)
    for cond, fn in zip(condlist, funclist):
        val = fn(x, *args, **kw) if callable(fn) else fn
        out = ew.where(cond, cast(promote(val)[0], out.dtype) if not callable(fn) else val, out)
    return cast(out, promote(x)[0].dtype)


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         kind=None):  # fmt: skip
    """`np.isin`: whether each element occurs in `test_elements` (compared one by one).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.isin(np.array([1, 2, 3]), [2, 5])
    array([False,  True, False])
    """
    e = asarray(element)
    t = ravel(asarray(test_elements))
    shape = tuple(shape_of(e))
    hits = ew.equal(reshape(e, shape + (1,)), reshape(t, (1,) * len(shape) + shape_of(t)))
    out = any_(hits, axis=-1)
    return ew.logical_not(out) if invert else out


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`np.fromfunction`: `function(*indices(shape))`, traced when `function` traces.

    >>> import tracejit.numpy as tnp
    >>> tnp.fromfunction(lambda i, j: i + j, (2, 2))
    array([[0., 1.],
           [1., 2.]])
    """
    return function(*np.indices(shape, dtype=dtype), **kwargs)


def unravel_index(indices, shape) -> tuple:
    """`np.unravel_index` (C order); traced indices give traced coordinates.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [int(v) for v in tnp.unravel_index(7, (3, 4))]
    [1, 3]
    """
    idx = asarray(indices)
    if not isinstance(idx, Tracer):
        return np.unravel_index(idx, shape)
    idx = cast(idx, _INT64)
    out = []
    for d in reversed(tuple(shape)):
        out.append(ew.remainder(idx, d))
        idx = ew.floor_divide(idx, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    """`np.ravel_multi_index` (C order); traced coordinates are clipped (mode 'raise' cannot
    raise in compiled code) or wrapped (mode='wrap').

    >>> import numpy as np, tracejit.numpy as tnp
    >>> int(tnp.ravel_multi_index((1, 3), (3, 4)))
    7
    """
    if not any(isinstance(m, Tracer) for m in multi_index):
        return np.ravel_multi_index(tuple(np.asarray(m) for m in multi_index), dims, mode, order)
    if order != "C":
        raise UnsupportedError("ravel_multi_index: only order='C' is supported for traced input")
    coords = broadcast_all([cast(asarray(m), _INT64) for m in multi_index], "ravel_multi_index")
    out, stride = None, 1
    for c, d in reversed(list(zip(coords, dims))):
        c = ew.remainder(c, d) if mode == "wrap" else ew.clip(c, 0, d - 1)
        term = ew.multiply(c, stride)
        out = term if out is None else ew.add(out, term)
        stride *= int(d)
    return out


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):  # fmt: skip
    """`np.logspace`: `base ** linspace(start, stop)`; traced bounds give a traced result.

    >>> import tracejit.numpy as tnp
    >>> tnp.logspace(0, 2, 3)
    array([  1.,  10., 100.])
    """
    if not any(isinstance(v, Tracer) for v in (start, stop, base)):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    y = ew.power(base, linspace(start, stop, num, endpoint, axis=axis))
    return y if dtype is None else cast(y, dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """`np.geomspace`: a geometric progression; traced (positive) bounds give a traced result.

    >>> import tracejit.numpy as tnp
    >>> tnp.geomspace(1, 1000, 4)
    array([   1.,   10.,  100., 1000.])
    """
    if not any(isinstance(v, Tracer) for v in (start, stop)):
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    y = ew.exp(linspace(ew.log(start), ew.log(stop), num, endpoint, axis=axis))
    return y if dtype is None else cast(y, dtype)


# NumPy's own functions: their answers depend only on static sizes.
tril_indices, triu_indices = np.tril_indices, np.triu_indices
diag_indices, mask_indices, indices = np.diag_indices, np.mask_indices, np.indices
bartlett, blackman, hamming, hanning, kaiser = (
    np.bartlett,
    np.blackman,
    np.hamming,
    np.hanning,
    np.kaiser,
)


def _shape_only(fn, name: str):
    def wrapper(arr, *args, **kwargs):
        return fn(np.empty(shape_of(arr), np.bool_), *args, **kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = f"`np.{name}`: from the shape of `arr` only (traced values work)."
    return wrapper


tril_indices_from = _shape_only(np.tril_indices_from, "tril_indices_from")
triu_indices_from = _shape_only(np.triu_indices_from, "triu_indices_from")
diag_indices_from = _shape_only(np.diag_indices_from, "diag_indices_from")


def ix_(*args) -> tuple:
    """`np.ix_`: open mesh index arrays; traced 1-D index arrays are reshaped, not converted.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [i.shape for i in tnp.ix_([0, 1], [2, 3, 4])]
    [(2, 1), (1, 3)]
    """
    n = len(args)
    out = []
    for k, a in enumerate(args):
        x = asarray(a)
        if len(shape_of(x)) != 1:
            raise TracejitValueError("Cross index must be 1 dimensional")
        out.append(reshape(x, (1,) * k + (shape_of(x)[0],) + (1,) * (n - k - 1)))
    return tuple(out)


__all__ = [
    n
    for n, v in list(globals().items())
    if callable(v)
    and not n.startswith("_")
    and (getattr(v, "__module__", None) == __name__ or getattr(np, n, None) is v)
    and n not in ("rearrange", "asarray", "cast", "promote", "shape_of", "broadcast_to",
                  "diagonal", "ravel", "reshape", "broadcast_all")
]  # fmt: skip
