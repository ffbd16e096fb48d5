"""The arrays a CUDA function returns: CuPy arrays with JAX's `.block_until_ready()`.

`CudaArray` is a thin subclass of `cupy.ndarray` (made once per CuPy module: CuPy is
imported only when a CUDA function runs); everything else is CuPy's. Kernels are queued on
CuPy's current stream and a call returns before they finish, so a timing loop calls
`out.block_until_ready()` (or `tj.block_until_ready(tree)`) before reading the clock, as in
JAX; it waits for the current stream and returns the array.
"""

from __future__ import annotations

_types: dict[type, type] = {}  # cupy.ndarray -> its CudaArray subclass


def _block_until_ready(self):
    """Wait until every launch queued on the current CUDA stream (this array's) is done."""
    from tracejit.devices import cupy_or_error

    cupy_or_error().cuda.get_current_stream().synchronize()
    return self


def result_type(cupy) -> type:
    """`CudaArray`: `cupy.ndarray` with `.block_until_ready()`."""
    cls = _types.get(cupy.ndarray)
    if cls is None:
        doc = "A CuPy array that a tracejit CUDA function returned (see results.py)."
        members = {"__slots__": (), "__module__": __name__, "__doc__": doc}
        cls = type("CudaArray", (cupy.ndarray,), members)
        cls.block_until_ready = _block_until_ready
        _types[cupy.ndarray] = cls
    return cls


def new_result(cupy, shape, dtype, memptr=None):
    """A fresh result array, or (donation) a new one on the memory at `memptr`: an array
    made on a memory pointer has `base` None, so the next call may donate it again."""
    return result_type(cupy)(shape, dtype, memptr)


__all__ = ["new_result", "result_type"]
