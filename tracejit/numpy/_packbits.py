"""`packbits` / `unpackbits`: booleans to the bits of uint8 and back, as shifts, masks and
sums over a reshaped axis (integer results: no gradient)."""

from __future__ import annotations

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.numpy._core import normalize_axis

_BIG = np.array([128, 64, 32, 16, 8, 4, 2, 1], np.uint8)


def _weights(bitorder: str):
    if bitorder not in ("big", "little"):
        raise TracejitValueError(f"bitorder must be 'big' or 'little', got {bitorder!r}")
    return _BIG if bitorder == "big" else _BIG[::-1].copy()


def _flat_or_axis(a, axis):
    if axis is None:
        return tnp.ravel(a), 0
    return a, normalize_axis(axis, tnp.ndim(a), "packbits")


def packbits(a, /, axis=None, bitorder: str = "big"):
    """`np.packbits`: each run of 8 elements along `axis` (zero-padded) into one uint8.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
    array([176, 128], dtype=uint8)
    """
    a = tnp.asarray(a)
    if a.dtype.kind not in "biu":
        raise TracejitTypeError(f"packbits: expected an integer or boolean array, got {a.dtype}")
    weights = _weights(bitorder)
    a, axis = _flat_or_axis(a, axis)
    a = tnp.moveaxis(tnp.not_equal(a, 0), axis, -1)
    n = tnp.shape(a)[-1]
    pad = -n % 8
    a = tnp.pad(a, [(0, 0)] * (tnp.ndim(a) - 1) + [(0, pad)])
    a = tnp.reshape(a, tnp.shape(a)[:-1] + ((n + pad) // 8, 8))
    packed = tnp.sum(tnp.where(a, weights, np.uint8(0)), axis=-1, dtype=np.uint8)
    return tnp.moveaxis(packed, -1, axis)


def unpackbits(a, /, axis=None, count=None, bitorder: str = "big"):
    """`np.unpackbits`: the bits of uint8 `a` along `axis` (8 per element), the first
    `count` of them (count < 0 drops that many; count past the end pads with zeros).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.unpackbits(np.array([176], np.uint8), count=4)
    array([1, 0, 1, 1], dtype=uint8)
    """
    a = tnp.asarray(a)
    if a.dtype != np.uint8:
        raise TracejitTypeError(f"unpackbits: expected a uint8 array, got {a.dtype}")
    weights = _weights(bitorder)
    a, axis = _flat_or_axis(a, axis)
    a = tnp.moveaxis(a, axis, -1)
    bits = tnp.not_equal(tnp.bitwise_and(a[..., None], weights), np.uint8(0))
    bits = tnp.astype(tnp.reshape(bits, tnp.shape(a)[:-1] + (tnp.shape(a)[-1] * 8,)), np.uint8)
    total = tnp.shape(bits)[-1]
    if count is not None:
        keep = int(count) if count >= 0 else max(total + int(count), 0)
        bits = bits[..., : min(keep, total)]
        if keep > total:
            bits = tnp.pad(bits, [(0, 0)] * (tnp.ndim(bits) - 1) + [(0, keep - total)])
    return tnp.moveaxis(bits, -1, axis)


__all__ = ["packbits", "unpackbits"]
