"""cuFFT's `PlanNd` on the emulator's memory, for the layouts tracejit plans: C-ordered data
whose leading `dims` are transformed and whose trailing elements (`batch` of them, stride
`batch`, distance 1) are the batch, or whose trailing `dims` are transformed and whose
leading elements are the batch (stride 1, distance the transform's size)
(backend_cuda/fft_strided.py). Out of place; the input
is left as it was, as cuFFT's complex-to-complex transforms leave it."""

from __future__ import annotations

import math

import numpy as np

CUFFT_C2C, CUFFT_Z2Z = 0x29, 0x69
CUFFT_FORWARD, CUFFT_INVERSE = -1, 1


class PlanNd:
    def __init__(self, shape, inembed, istride, idist, onembed, ostride, odist, fft_type,
                 batch, order, last_axis, last_size):  # fmt: skip
        if fft_type not in (CUFFT_C2C, CUFFT_Z2Z) or order != "C":
            raise NotImplementedError("the emulator's PlanNd: complex, C order only")
        size = math.prod(shape)
        if (istride, idist) != (ostride, odist) or (istride, idist) not in ((batch, 1), (1, size)):
            raise NotImplementedError(
                "the emulator's PlanNd: leading axes with a trailing batch, or trailing axes "
                "with a leading batch"
            )
        if tuple(inembed) != tuple(shape) or tuple(onembed) != tuple(shape):
            raise NotImplementedError("the emulator's PlanNd: embeddings equal to the shape")
        self.shape, self.batch, self.trailing = tuple(shape), batch, istride == 1
        self.dtype = np.complex64 if fft_type == CUFFT_C2C else np.complex128

    def fft(self, a, out, direction) -> None:
        from cupy.cuda._stream import issue

        n = math.prod(self.shape) * self.batch
        if a.dtype != self.dtype or out.dtype != self.dtype or a.size != n or out.size != n:
            raise ValueError("PlanNd.fft: operands do not match the plan")
        k = len(self.shape)
        axes = tuple(range(1, k + 1)) if self.trailing else tuple(range(k))

        def run() -> None:
            batched = (self.batch, *self.shape) if self.trailing else (*self.shape, self.batch)
            src = a._a.reshape(batched)
            if direction == CUFFT_FORWARD:
                res = np.fft.fftn(src, axes=axes)
            else:  # cuFFT's inverse is not normalized
                res = np.fft.ifftn(src, axes=axes, norm="forward")
            out._a[...] = res.astype(self.dtype).reshape(out.shape)

        issue(run)
