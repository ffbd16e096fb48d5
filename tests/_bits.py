"""Bit-for-bit comparison of a device's result with NumPy's (any NaN matches any NaN)."""

from __future__ import annotations

import numpy as np

import tracejit as tj


def assert_same_bits(got, want):
    got = np.asarray(tj.device_get(got))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    parts = (
        [(got.real, want.real), (got.imag, want.imag)] if want.dtype.kind == "c" else [(got, want)]
    )
    for g, w in parts:
        if w.dtype.kind == "f":
            assert np.array_equal(np.isnan(g), np.isnan(w)), (g, w)
            g, w = np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w)
        bits = np.dtype(f"u{w.dtype.itemsize}")
        assert np.array_equal(g.view(bits), w.view(bits)), (g, w)
