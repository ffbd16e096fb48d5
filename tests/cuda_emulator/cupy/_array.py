"""`cupy.ndarray` on host memory: a NumPy array behind CuPy's interface.

Like CuPy's, it refuses implicit conversion to NumPy, so host code that would silently read
"device" data fails here as it would on a GPU.
"""

from __future__ import annotations

import numpy as np

from cupy._memory import Memory, MemoryPointer
from cupy.cuda._stream import refuse_sync


class ndarray:
    # the host array, the allocation it lives in (kept alive), and, as CuPy's `base`, the
    # array that owns the memory when this one is a view (None when it owns it); weakly
    # referable like CuPy's arrays
    __slots__ = ("__weakref__", "_a", "_mem", "base")

    def __init__(self, shape, dtype=float, memptr: MemoryPointer | None = None, strides=None):
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if memptr is None:
            memptr = MemoryPointer(Memory(nbytes))
        mem = memptr.mem
        offset = memptr.offset
        if nbytes == 0:  # touches no memory: CuPy takes any pointer (row t of a (4, 0) array)
            offset = min(offset, mem.size)
        elif offset + nbytes > mem.size:
            raise ValueError("the memory pointer's allocation is too small for this array")
        self._a = np.ndarray(shape, dtype, buffer=mem.buf, offset=offset, strides=strides)
        self._mem = mem
        self.base = None  # as CuPy: an array made on a memory pointer has no base

    def _view(self, a: np.ndarray) -> ndarray:
        """`a`, a view of this array's memory, as an emulated array."""
        obj = ndarray.__new__(ndarray)
        obj._a = a
        obj._mem = self._mem
        obj.base = self if self.base is None else self.base  # CuPy's views (reshape too)
        return obj

    # ------------------------------------------------------------ attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)

    @property
    def data(self) -> MemoryPointer:
        """As CuPy's: a pointer into the allocation (`cupy.ndarray(shape, dtype, x.data)`)."""
        return MemoryPointer(self._mem, self._a.__array_interface__["data"][0] - self._mem.ptr)

    @property
    def __cuda_array_interface__(self) -> dict:
        a = self._a
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.__array_interface__["data"][0], False),
            "strides": None if a.flags.c_contiguous else a.strides,
            "version": 3,
        }

    def __array__(self, *args, **kwargs):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
            "construct a NumPy array explicitly."
        )

    def __len__(self) -> int:
        return len(self._a)

    def __repr__(self) -> str:
        return f"cupy-emulated {self._a!r}"

    # ------------------------------------------------------------ host transfers
    def get(self) -> np.ndarray:
        refuse_sync("a device-to-host copy")
        return self._a.copy()

    def set(self, arr) -> None:
        refuse_sync("a host-to-device copy")
        if isinstance(arr, ndarray):
            raise TypeError("set() takes a NumPy array")
        arr = np.asarray(arr)
        if arr.shape != self._a.shape or arr.dtype != self._a.dtype:
            raise ValueError("set(): shape and dtype must match")
        self._a[...] = arr

    # ------------------------------------------------------------ views and copies
    def reshape(self, *shape) -> ndarray:
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return self._view(self._a.reshape(shape))

    def view(self, dtype) -> ndarray:
        return self._view(self._a.view(dtype))

    def swapaxes(self, a: int, b: int) -> ndarray:
        return self._view(self._a.swapaxes(a, b))

    def transpose(self, *axes) -> ndarray:
        return self._view(self._a.transpose(*axes))

    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    def __getitem__(self, key) -> ndarray:
        key = _host_index(key)
        key = (*key, ...) if isinstance(key, tuple) else (key, ...)  # 0-d results stay views
        return self._view(self._a[key])

    def __setitem__(self, key, value) -> None:
        self._a[_host_index(key)] = _host(value)

    def astype(self, dtype, copy: bool = True) -> ndarray:
        if not copy and np.dtype(dtype) == self.dtype:  # as CuPy's: this array itself
            return self
        return _from_host(self._a.astype(dtype))

    def copy(self) -> ndarray:
        return _from_host(self._a)

    def conj(self) -> ndarray:
        """As CuPy's: a new array for a complex one, this array itself for a real one."""
        return _from_host(self._a.conj()) if self.dtype.kind == "c" else self

    def fill(self, value) -> None:
        self._a.fill(value)

    def ravel(self) -> ndarray:
        return self._view(self._a.ravel())

    def item(self):
        return self._a.item()

    def sum(self, *args, **kwargs) -> ndarray:  # CuPy's reduction kernel: flushed float32
        return _from_host(flush(np.asarray(flush(self._a).sum(*args, **kwargs))))

    def all(self, *args, **kwargs) -> ndarray:
        return _from_host(np.asarray(self._a.all(*args, **kwargs)))

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)


def flush(a):
    """`a` as CuPy's own kernels see and leave float32 values: compiled with `-ftz=true`
    (cupy/cuda/compiler.py), their float32 arithmetic and comparisons read a subnormal
    operand as a zero of its sign and write a subnormal result as one (PTX `.ftz`). Other
    dtypes, and values that are not float32/complex64 arrays, are returned as they are."""
    if not isinstance(a, np.ndarray) or a.dtype not in (np.float32, np.complex64):
        return a
    parts = (a.real, a.imag) if a.dtype == np.complex64 else (a,)
    if not any((np.abs(p) < np.finfo(np.float32).tiny).any() for p in parts):
        return a
    out = a.copy()
    for p in (out.real, out.imag) if a.dtype == np.complex64 else (out,):
        p[np.abs(p) < np.finfo(np.float32).tiny] *= 0  # a zero of the value's sign
    return out


def _binop(name: str):
    op = getattr(np.ndarray, name)

    def method(self, other):  # a CuPy elementwise kernel: flushed float32 in and out
        return _from_host(flush(np.asarray(op(flush(self._a), flush(_host(other))))))

    def library(self, other):  # `@`: cuBLAS, not a kernel CuPy compiles
        return _from_host(np.asarray(op(self._a, _host(other))))

    if name == "__matmul__":
        library.__name__ = name
        return library

    method.__name__ = name
    return method


for _name in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__pow__", "__matmul__", "__neg__", "__eq__", "__ne__", "__lt__",
    "__le__", "__gt__", "__ge__", "__invert__", "__and__", "__rand__", "__or__", "__ror__",
    "__xor__", "__rshift__", "__lshift__",
):  # fmt: skip
    if _name == "__neg__":
        setattr(ndarray, _name, lambda self: _from_host(flush(-flush(self._a))))
    elif _name == "__invert__":
        setattr(ndarray, _name, lambda self: _from_host(~self._a))
    else:
        setattr(ndarray, _name, _binop(_name))
ndarray.__hash__ = None  # type: ignore[assignment]


def _host_index(key):
    if isinstance(key, tuple):
        return tuple(_host(k) for k in key)
    return _host(key)


def _host(x):
    return x._a if isinstance(x, ndarray) else x


def _from_host(a: np.ndarray) -> ndarray:
    """A new emulated device array holding a copy of host array `a`."""
    a = np.asarray(a)
    out = ndarray(a.shape, a.dtype)
    out._a[...] = a
    return out
