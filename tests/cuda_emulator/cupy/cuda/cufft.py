"""cuFFT's `PlanNd` on the emulator's memory, for the layout tracejit plans: C-ordered data
whose leading `dims` are transformed and whose trailing elements (`batch` of them, stride
`batch`, distance 1) are the batch (backend_cuda/fft_strided.py). Out of place; the input
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
        if (istride, idist, ostride, odist) != (batch, 1, batch, 1):
            raise NotImplementedError("the emulator's PlanNd: leading axes, trailing batch")
        if tuple(inembed) != tuple(shape) or tuple(onembed) != tuple(shape):
            raise NotImplementedError("the emulator's PlanNd: embeddings equal to the shape")
        self.shape, self.batch = tuple(shape), batch
        self.dtype = np.complex64 if fft_type == CUFFT_C2C else np.complex128

    def fft(self, a, out, direction) -> None:
        from cupy.cuda._stream import issue

        n = math.prod(self.shape) * self.batch
        if a.dtype != self.dtype or out.dtype != self.dtype or a.size != n or out.size != n:
            raise ValueError("PlanNd.fft: operands do not match the plan")
        axes = tuple(range(len(self.shape)))

        def run() -> None:
            src = a._a.reshape(self.shape + (self.batch,))
            if direction == CUFFT_FORWARD:
                res = np.fft.fftn(src, axes=axes)
            else:  # cuFFT's inverse is not normalized
                res = np.fft.ifftn(src, axes=axes) * math.prod(self.shape)
            out._a[...] = res.astype(self.dtype).reshape(out.shape)

        issue(run)
