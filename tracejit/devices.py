"""Devices: "cpu" (default), "cuda" and "numpy" (the reference interpreter).

`device_put` / `device_get` move pytrees of arrays explicitly; tracejit never mixes devices
silently.

>>> import numpy as np, tracejit as tj
>>> tj.device_get(tj.device_put(np.ones(2), "cpu"))
array([1., 1.])
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit.config import DEVICES
from tracejit.const_array import ConstArray
from tracejit.errors import DeviceError
from tracejit.pytree import tree_map


@functools.lru_cache(maxsize=1)
def _cupy_status() -> tuple[object | None, str]:
    """(cupy module or None, reason it cannot be used)."""
    try:
        import cupy
    except Exception as err:  # noqa: BLE001  (ImportError, or a broken CUDA runtime at import)
        return None, (
            f"CuPy is not importable ({err.__class__.__name__}: {err}); install it with "
            "pip install 'tracejit[cuda]'"
        )
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # noqa: BLE001  (any CUDA runtime failure means "no GPU")
        return None, f"CuPy is installed but found no usable CUDA GPU ({err})"
    if count == 0:
        return None, "CuPy is installed but found no CUDA GPU"
    return cupy, ""


def cupy_or_error():
    """The cupy module, or DeviceError saying whether CuPy or the GPU is missing."""
    cupy, reason = _cupy_status()
    if cupy is None:
        raise DeviceError(f"device='cuda' is unavailable: {reason}")
    return cupy


def cuda_available() -> bool:
    return _cupy_status()[0] is not None


def is_cuda_array(x) -> bool:
    return hasattr(x, "__cuda_array_interface__")


def _to_numpy(x):
    if is_cuda_array(x):
        return x.get()
    return np.asarray(x)


def to_cuda(cupy, x):
    """`x` as a CuPy array; host data is copied bit for bit.

    Not `cupy.asarray` alone: it fills a 0-d array through `ndarray.fill`, which memsets
    zero for any value == 0 and so turns -0.0 into +0.0 (1 / x then gives +inf).
    """
    if is_cuda_array(x):
        return cupy.asarray(x)
    host = np.asarray(x)
    return cupy.asarray(host.reshape(-1)).reshape(host.shape)


def device_input(cupy, x, dtype: np.dtype):
    """Argument `x` as a C-contiguous CuPy array of `dtype` (NumPy arrays are copied in)."""
    if not is_cuda_array(x):
        x = to_cuda(cupy, np.asarray(x, dtype=dtype))
    elif x.dtype != dtype:
        x = x.astype(dtype)
    out = cupy.ascontiguousarray(x)  # kernels index row-major data (no copy if it is)
    return out if out.shape == x.shape else out.reshape(x.shape)  # it makes 0-d arrays 1-d


def device_put(x, device: str = "cpu"):
    """Copy every array leaf of `x` to `device` ("cpu"/"numpy": NumPy, "cuda": CuPy).

    Host data comes back as arrays with JAX's `.block_until_ready()`, as jit's results (a
    ConstArray view on the host; on the GPU a CudaArray, backend_cuda/results.py); a CuPy
    array put on "cuda" is returned as it is.
    """
    if device not in DEVICES:
        raise DeviceError(f"unknown device {device!r}; use one of {DEVICES}")
    if device == "cuda":
        from tracejit.backend_cuda.results import new_result

        cupy = cupy_or_error()

        def put(a):
            if is_cuda_array(a):
                return cupy.asarray(a)
            y = to_cuda(cupy, a)  # a fresh copy: the result owns its memory (`base` None)
            return new_result(cupy, y.shape, y.dtype, y.data)

        return tree_map(put, x)
    return tree_map(lambda a: ConstArray.of(_to_numpy(a)), x)


def device_get(x):
    """Every array leaf of `x` as a NumPy array (copied from the GPU if needed)."""
    return tree_map(_to_numpy, x)
