"""Operators, array methods and NumPy protocols of `Tracer`, each forwarding to `tracejit.numpy`.

Imported by `tracejit.numpy` once its functions exist (lookups happen at call time): the
NumPy layer installs itself on the tracer, so `tracejit.tracer` never imports it.
"""

from __future__ import annotations

import numpy as np

import tracejit.numpy as tnp
from tracejit.errors import ImmutableArrayError
from tracejit.numpy._array_api_info import ARRAY_DEVICE, check_api_version, check_array_device
from tracejit.numpy._protocols import array_function, array_ufunc
from tracejit.tracer.core import Tracer


def _binary(name: str, reflected: bool = False):
    if reflected:
        return lambda self, other: getattr(tnp, name)(other, self)
    return lambda self, other: getattr(tnp, name)(self, other)


def _unary(name: str):
    return lambda self: getattr(tnp, name)(self)


def _method(name: str):
    def method(self, *args, **kwargs):
        return getattr(tnp, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


_BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "power",
    "matmul": "matmul",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "left_shift",
    "rshift": "right_shift",
}
for _op, _fn in _BINARY.items():
    setattr(Tracer, f"__{_op}__", _binary(_fn))
    setattr(Tracer, f"__r{_op}__", _binary(_fn, reflected=True))


def _pow(self, other):
    """`self ** other` as NumPy's ndarray ** scalar: for a complex array a Python int 2
    squares, -1 takes the reciprocal and a Python float 0.5 the square root (NumPy's fast
    path; its special values are not power's: (-0-0j) ** 2 is 0-0j, np.power gives 0+0j)."""
    if type(other) in (int, float) and tnp.iscomplexobj(self):
        name = {2: "square", -1: "reciprocal"} if type(other) is int else {0.5: "sqrt"}
        if other in name:
            return getattr(tnp, name[other])(self)
    return tnp.power(self, other)


Tracer.__pow__ = _pow
Tracer.__divmod__ = _binary("divmod")
Tracer.__rdivmod__ = _binary("divmod", reflected=True)

for _op, _fn in {
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "eq": "equal",
    "ne": "not_equal",
}.items():
    setattr(Tracer, f"__{_op}__", _binary(_fn))

for _op, _fn in {
    "neg": "negative",
    "pos": "positive",
    "abs": "absolute",
    "invert": "invert",
}.items():
    setattr(Tracer, f"__{_op}__", _unary(_fn))

_METHODS = (
    "sum prod mean var std max min argmax argmin all any cumsum reshape transpose ravel "
    "squeeze swapaxes clip round take repeat dot copy cumprod conj conjugate diagonal trace "
    "ptp nonzero sort argsort searchsorted"
)
for _name in _METHODS.split():
    setattr(Tracer, _name, _method(_name))


def _astype(self, dtype, copy=True):
    return tnp.astype(self, dtype)


def _getitem(self, index):
    return tnp.getitem(self, index)


def _setitem(self, index, value):
    raise ImmutableArrayError(
        "traced arrays are immutable: x[i] = v cannot be recorded. Write x = x.at[i].set(v) "
        "(or .add, .multiply, .min, .max) for a functional update, or tnp.where(mask, v, x)"
    )


_NUMPY_INDEXED = (
    "; a NumPy array indexed by a traced value does this: write tnp.asarray(a)[i] or "
    "tnp.take(a, i) instead)"
)


def _index(self):
    raise self._concretization_error("Using as an index (__index__" + _NUMPY_INDEXED)


def _array(self, dtype=None, copy=None):
    what = "Converting to a NumPy array (np.asarray" + _NUMPY_INDEXED
    if dtype is not None:  # also np.float32(x): NumPy's scalar types cannot return a tracer
        what = (
            f"Converting to a NumPy array of {np.dtype(dtype)} (np.asarray, or a NumPy scalar "
            f"type called on it such as np.{np.dtype(dtype).name}(x): write "
            f"x.astype(np.{np.dtype(dtype).name}) or tnp.asarray(x, np.{np.dtype(dtype).name}))"
        )
    raise self._concretization_error(what, True)  # True: name list-argument leaves too


def _reshape(self, *shape, order="C"):
    return tnp.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)


def _transpose(self, *axes):
    return tnp.transpose(self, axes[0] if len(axes) == 1 else (axes or None))


Tracer.astype = _astype
Tracer.reshape = _reshape  # x.reshape(2, 3) as well as x.reshape((2, 3))
Tracer.transpose = _transpose  # x.transpose(1, 0) as well as x.transpose((1, 0))
Tracer.at = property(lambda self: tnp._indexing.AtIndexer(self))  # x.at[i].set(v) / .add(v)
Tracer.flatten = _method("ravel")
Tracer.__getitem__ = _getitem
Tracer.__setitem__ = _setitem
Tracer.__index__ = _index
Tracer.__array__ = _array
Tracer.T = property(lambda self: tnp.transpose(self))
Tracer.mT = property(lambda self: tnp.matrix_transpose(self))
Tracer.real = property(lambda self: tnp.real(self))
Tracer.imag = property(lambda self: tnp.imag(self))
Tracer.__hash__ = None


# NumPy protocols: np.exp(t), np.sum(t, axis=1) trace like tnp
def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    return array_ufunc(ufunc, method, inputs, kwargs)


def _array_function(self, func, types, args, kwargs):
    return array_function(func, args, kwargs)


Tracer.__array_ufunc__ = _array_ufunc
Tracer.__array_function__ = _array_function


# Array API: generic code asks a value for its namespace and device (numpy/_array_api_info.py)
def _array_namespace(self, api_version=None):
    check_api_version(api_version)
    return tnp


def _to_device(self, device, /, *, stream=None):
    check_array_device(device, "to_device")
    return self


Tracer.__array_namespace__ = _array_namespace
Tracer.device = property(lambda self: ARRAY_DEVICE)
Tracer.to_device = _to_device
