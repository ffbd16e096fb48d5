"""A stand-in for CuPy that runs tracejit's CUDA kernels on the CPU (see ../README.md).

Only what tracejit and its tests use: arrays, transfers, `matmul`, `RawModule` over the
emulator's "cubin" (a shared library), `cuda.nvrtc`, `cuda.Device`, `cuda.alloc`, and the
library calls of tracejit/backend_cuda/library.py (`linalg`, `fft`, `argsort`, `sort`, `full`,
and the elementwise `isnan`, `isfinite`, `abs`, `where`, `tril`, `triu` around them).
"""

from __future__ import annotations

import numpy as np

from cupy import cuda
from cupy._array import _from_host, _host, ndarray
from cupy._library import (
    abs,
    argsort,
    fft,
    full,
    isfinite,
    isnan,
    linalg,
    searchsorted,
    sort,
    tril,
    triu,
    where,
)  # fmt: skip
from cupy._module import RawKernel, RawModule

__version__ = "emulator"
EMULATED = True


def asarray(x, dtype=None) -> ndarray:
    if isinstance(x, ndarray):
        return x if dtype is None or x.dtype == np.dtype(dtype) else x.astype(dtype)
    return _from_host(np.asarray(x, dtype=dtype))


array = asarray


def asnumpy(x) -> np.ndarray:
    return x.get() if isinstance(x, ndarray) else np.asarray(x)


def ascontiguousarray(x) -> ndarray:
    """As CuPy's (and NumPy's): at least 1-d (a 0-d array comes back with shape (1,))."""
    x = asarray(x)
    if x.ndim == 0:
        return x.reshape(1)
    return x if x.flags.c_contiguous else _from_host(np.ascontiguousarray(x._a))


def empty(shape, dtype=float) -> ndarray:
    return ndarray(shape, dtype)


def zeros(shape, dtype=float) -> ndarray:
    out = ndarray(shape, dtype)
    out._a[...] = 0
    return out


def arange(*args, dtype=None) -> ndarray:
    return _from_host(np.arange(*args, dtype=dtype))


def matmul(a: ndarray, b: ndarray, out: ndarray | None = None) -> ndarray:
    """cuBLAS's stand-in: NumPy's matmul into `out` (which must be an emulated array).

    Like CuPy 14 (seen on an H100), a cuBLAS call while the current stream captures raises
    NotImplementedError instead of being recorded.
    """
    from cupy.cuda._stream import get_current_stream, issue

    if get_current_stream().recording is not None:
        raise NotImplementedError(
            "calling cuBLAS API during stream capture is currently unsupported"
        )

    if out is None:
        out = empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]),
                    np.result_type(a.dtype, b.dtype))  # fmt: skip

    def run() -> None:
        out._a[...] = np.matmul(_host(a), _host(b))

    issue(run)
    return out


def __getattr__(name: str):
    """dtypes and scalar types (cupy.float32, ...) are NumPy's, as in CuPy."""
    value = getattr(np, name, None)
    if isinstance(value, type) and issubclass(value, np.generic) or isinstance(value, np.dtype):
        return value
    raise AttributeError(f"the CuPy emulator has no {name!r}")


__all__ = [
    "RawKernel",
    "RawModule",
    "abs",
    "arange",
    "argsort",
    "array",
    "asarray",
    "ascontiguousarray",
    "asnumpy",
    "cuda",
    "empty",
    "fft",
    "full",
    "isfinite",
    "isnan",
    "linalg",
    "matmul",
    "ndarray",
    "searchsorted",
    "sort",
    "tril",
    "triu",
    "where",
    "zeros",
]
