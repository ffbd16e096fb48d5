"""NumPy names that are not array computations: shape queries, type objects, printing, I/O.

`shape`, `ndim`, `size` answer from the static shape (a traced value has one). Printing and
file I/O are NumPy's own functions: they work on concrete arrays, and a traced value passed to
them raises the usual ConcretizationError (its value is not known while tracing).
`tnp.ndarray` matches NumPy arrays and traced values alike (`isinstance(x, tnp.ndarray)`).
"""

from __future__ import annotations

import numpy as np

from tracejit.numpy._core import shape_of
from tracejit.tracer.core import Tracer


def shape(a) -> tuple[int, ...]:
    """`np.shape`: the static shape (also of a traced value).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.shape(np.ones((2, 3))), tnp.shape(1.0)
    ((2, 3), ())
    """
    return tuple(shape_of(a))


def ndim(a) -> int:
    """`np.ndim`: the number of axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.ndim(np.ones((2, 3)))
    2
    """
    return len(shape_of(a))


def size(a, axis: int | None = None) -> int:
    """`np.size`: the number of elements (along `axis` if given).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.size(np.ones((2, 3))), tnp.size(np.ones((2, 3)), 1)
    (6, 3)
    """
    s = shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def isscalar(element) -> bool:
    """`np.isscalar`: a traced value is an array, never a scalar (as in NumPy for 0-d arrays).

    >>> import tracejit.numpy as tnp
    >>> tnp.isscalar(1.0), tnp.isscalar([1.0])
    (True, False)
    """
    return False if isinstance(element, Tracer) else bool(np.isscalar(element))


def iterable(y) -> bool:
    """`np.iterable`: a traced value is iterable unless it is 0-d.

    >>> import tracejit.numpy as tnp
    >>> tnp.iterable([1]), tnp.iterable(2)
    (True, False)
    """
    return bool(y.shape) if isinstance(y, Tracer) else bool(np.iterable(y))


def iscomplexobj(x) -> bool:
    """`np.iscomplexobj`: whether the dtype is complex (traced values by their dtype).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.iscomplexobj(np.ones(2))
    False
    """
    return x.dtype.kind == "c" if isinstance(x, Tracer) else bool(np.iscomplexobj(x))


def isrealobj(x) -> bool:
    """`np.isrealobj`: True for traced values.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.isrealobj(np.ones(2))
    True
    """
    return not iscomplexobj(x)


class _ArrayType(type):
    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, (np.ndarray, Tracer))

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, (np.ndarray, Tracer))


class ndarray(metaclass=_ArrayType):
    """The array type for `isinstance` checks: NumPy arrays and traced values.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> isinstance(np.ones(2), tnp.ndarray)
    True
    """


# NumPy's own objects: printing, I/O, type objects and warnings (concrete arrays only).
ufunc = np.ufunc
ComplexWarning = np.exceptions.ComplexWarning
printoptions, get_printoptions, set_printoptions = (
    np.printoptions,
    np.get_printoptions,
    np.set_printoptions,
)
array_repr, array_str = np.array_repr, np.array_str
save, savez, load = np.save, np.savez, np.load
fromfile, frombuffer, fromstring, fromiter = np.fromfile, np.frombuffer, np.fromstring, np.fromiter
frompyfunc = np.frompyfunc

__all__ = [
    "ComplexWarning",
    "array_repr",
    "array_str",
    "frombuffer",
    "fromfile",
    "fromiter",
    "frompyfunc",
    "fromstring",
    "get_printoptions",
    "iscomplexobj",
    "isrealobj",
    "isscalar",
    "iterable",
    "load",
    "ndarray",
    "ndim",
    "printoptions",
    "save",
    "savez",
    "set_printoptions",
    "shape",
    "size",
    "ufunc",
]
