"""Host primitives on the GPU: linear algebra, FFTs and sorting through CuPy's libraries.

A primitive in `ir/array_library.ARRAY_IMPLS` is one function over an array namespace. Here
it runs with CuPy on the call's device arrays (cuSOLVER, cuFFT, CuPy's sort), queued on the
current stream like the kernels around it, and its results are copied into the step's output
buffers on the device: no operand goes to the host. As in JAX, a matrix that cuSOLVER
rejects gives NaN: CuPy is asked to raise (`cupyx.errstate(linalg="raise")`, which reads the
solver's status, a small synchronization) and the function then fills that matrix with NaN.

Dtypes CuPy cannot hold (bfloat16) keep the host step (`launcher._FallbackStep`).

>>> import numpy as np
>>> import ml_dtypes
>>> device_dtypes([np.dtype(np.float32), np.dtype(np.complex64)])
True
>>> device_dtypes([np.dtype(ml_dtypes.bfloat16)])
False
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import numpy as np

from tracejit.errors import InternalError
from tracejit.ir import kernel as K
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.primitives import get as get_primitive


def device_dtypes(dtypes: Iterable[np.dtype]) -> bool:
    """Whether CuPy holds arrays of each dtype (NumPy's own; not ml_dtypes' bfloat16)."""
    return all(dt.kind in "biufc" and dt.type.__module__ == "numpy" for dt in dtypes)


def runs_on_device(step: K.Fallback, buffers: dict[int, K.Buffer]) -> bool:
    """Whether `step` is a primitive written over an array namespace, on CuPy's dtypes."""
    if ARRAY_IMPLS.get(step.prim) is None:
        return False
    return device_dtypes(buffers[b].dtype for b in (*step.inputs, *step.outputs))


def _raising():
    """CuPy's linalg functions raise LinAlgError for a rejected matrix inside this."""
    try:
        import cupyx
    except ImportError:  # the CUDA emulator: NumPy's LAPACK raises anyway
        return contextlib.nullcontext()
    return cupyx.errstate(linalg="raise")


class LibraryStep:
    """One host primitive run by CuPy on device arrays, results written into its buffers."""

    def __init__(self, cupy, step: K.Fallback, buffers: dict[int, K.Buffer]):
        self.cupy = cupy
        self.s = step
        self.prim = get_primitive(step.prim)
        self.impl = ARRAY_IMPLS.get(self.prim)
        self.buffers = buffers

    def __call__(self, call) -> None:
        s = self.s
        ins = [call.array(b) for b in s.inputs]
        with _raising():
            results = self.impl(*ins, xp=self.cupy, **s.attrs)
        results = results if self.prim.multiple_results else (results,)
        for b, res in zip(s.outputs, results):
            buf = self.buffers[b]
            if tuple(res.shape) != tuple(buf.shape):
                raise InternalError(f"{s.prim} on CuPy gave {res.shape}, the plan says {buf.shape}")
            if buf.size:
                call.array(b)[...] = res.astype(buf.dtype, copy=False)


__all__ = ["LibraryStep", "device_dtypes", "runs_on_device"]
