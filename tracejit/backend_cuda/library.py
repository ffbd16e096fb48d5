"""Host primitives on the GPU: linear algebra, FFTs and sorting through CuPy's libraries.

A primitive in `ir/array_library.ARRAY_IMPLS` is one function over an array namespace. Here
it runs with CuPy on the call's device arrays (cuSOLVER, cuFFT, CuPy's sort), queued on the
current stream like the kernels around it: no operand goes to the host. CuPy returns new
arrays (its libraries take no `out=`), and the step's buffers adopt them where nothing else
depends on the buffer's place: an output or temporary that this step alone writes, that no
view aliases and that the function returns at most once (`adoptable`) becomes the array CuPy
returned, when that array is a contiguous owner of memory no operand shares (`_fresh`). Else
(a donated output's memory, an unusual result) it is copied over, as before: on an H100 that
copy was +0.13 ms for an rfft of 2^24 float32, +0.14 ms for a sort (benchmarks/RESULTS.md).
Kernels read a buffer's address when they launch, so the ones after see the adopted array;
a step like this is "host" (launcher.step_kinds), so it is never captured in a CUDA graph,
whose addresses are fixed.

As in JAX, a matrix that cuSOLVER rejects gives NaN: for the primitives that read the
solver's status (`linalg_prims.READS_STATUS`) CuPy is asked to raise
(`cupyx.errstate(linalg="raise")`, a small synchronization) and the function then fills
that matrix with NaN; one matrix's cholesky decides it on the device (backend_cuda/potrf.py).

Some primitives have implementations of their own, faster than CuPy's general call: one
matrix's cholesky (backend_cuda/potrf.py), fft/ifft over leading or trailing axes by one
cuFFT plan (backend_cuda/fft_strided.py), sort/argsort of rows up to 8192 long
(backend_cuda/row_sort.py) and one matrix's svd with vectors by Jacobi
(backend_cuda/gesvdj.py, torch's driver). Each module's docstring has its H100 numbers.

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
from collections import Counter
from collections.abc import Iterable

import numpy as np

from tracejit.backend_cuda import fft_strided, gesvdj, potrf, row_sort
from tracejit.errors import InternalError
from tracejit.ir import kernel as K
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.linalg_prims import READS_STATUS
from tracejit.ir.memory import step_io
from tracejit.ir.primitives import get as get_primitive

# primitives with an implementation of their own here, faster than CuPy's general call
_OWN_IMPLS = {
    "cholesky": potrf.cholesky_impl,
    "fft": fft_strided.fft_impl,
    "svd": gesvdj.svd_impl,
    "sort": row_sort.sort_impl,
    "argsort": row_sort.argsort_impl,
}


def device_dtypes(dtypes: Iterable[np.dtype]) -> bool:
    """Whether CuPy holds arrays of each dtype (NumPy's own; not ml_dtypes' bfloat16)."""
    return all(dt.kind in "biufc" and dt.type.__module__ == "numpy" for dt in dtypes)


def runs_on_device(step: K.Fallback, buffers: dict[int, K.Buffer]) -> bool:
    """Whether `step` is a primitive written over an array namespace, on CuPy's dtypes."""
    if ARRAY_IMPLS.get(step.prim) is None:
        return False
    return device_dtypes(buffers[b].dtype for b in (*step.inputs, *step.outputs))


def adoptable(
    schedule: K.Schedule, buffers: dict[int, K.Buffer], steps: Iterable[K.Fallback]
) -> set[int]:
    """The outputs of `steps` (run by CuPy) that may be bound to the array CuPy returned: an
    output or temporary no other step writes, no view aliases, returned at most once."""
    writes = Counter(b for step in schedule.steps for b in step_io(step)[1])
    viewed = {b.base for b in buffers.values() if b.kind == "view"}
    returned = Counter(schedule.outputs)
    return {
        b
        for step in steps
        for b in step.outputs
        if buffers[b].kind in ("output", "temp")
        and writes[b] == 1
        and b not in viewed
        and returned[b] <= 1
    }


def _fresh(arr, others: list) -> bool:
    """Whether `arr` owns contiguous memory that no array of `others` lies in."""
    if arr.base is not None or not arr.flags.c_contiguous:
        return False
    mem = arr.data.mem
    return all(
        o.data.mem.ptr + o.data.mem.size <= mem.ptr or mem.ptr + mem.size <= o.data.mem.ptr
        for o in others
        if o.size
    )


def _raising():
    """CuPy's linalg functions raise LinAlgError for a rejected matrix inside this."""
    try:
        import cupyx
    except ImportError:  # the CUDA emulator: NumPy's LAPACK raises anyway
        return contextlib.nullcontext()
    return cupyx.errstate(linalg="raise")


class LibraryStep:
    """One host primitive run by CuPy on device arrays, its buffers bound to the results."""

    def __init__(self, cupy, step: K.Fallback, buffers: dict[int, K.Buffer]):
        self.cupy = cupy
        self.s = step
        self.prim = get_primitive(step.prim)
        self.impl = _OWN_IMPLS.get(step.prim) or ARRAY_IMPLS.get(self.prim)
        self.buffers = buffers
        self.raising = step.prim in READS_STATUS  # else no errstate (a cost per call)

    def __call__(self, call) -> None:
        s = self.s
        ins = [call.array(b) for b in s.inputs]
        with _raising() if self.raising else contextlib.nullcontext():
            results = self.impl(*ins, xp=self.cupy, **s.attrs)
        results = results if self.prim.multiple_results else (results,)
        placed = list(ins)  # what a result adopted must not share memory with
        for b, res in zip(s.outputs, results):
            buf = self.buffers[b]
            if tuple(res.shape) != tuple(buf.shape):
                raise InternalError(f"{s.prim} on CuPy gave {res.shape}, the plan says {buf.shape}")
            res = res.astype(buf.dtype, copy=False)
            unplaced = b in call.exe.adoptable and b not in call.arrays  # not donated memory
            if buf.size and unplaced and _fresh(res, placed):
                call.adopt(b, res)
            else:
                dst = call.array(b)
                if buf.size:
                    dst[...] = res
            placed.append(res)


__all__ = ["LibraryStep", "adoptable", "device_dtypes", "runs_on_device"]
