"""The scans keep NumPy's sequential order across the CUDA kernels' tiles and chunks.

backend_cuda/scan.py scans a contiguous axis through shared-memory tiles (rows x chunks of
columns, a running value carried from chunk to chunk) and a strided axis in register chunks.
The shapes here cross every boundary of those: one long row (chunks of 2048), rows longer
than a chunk with a ragged last chunk, more tiles than the emulator's grid (grid-stride),
short rows (several per thread), size-0 and size-1 axes, and non-contiguous inputs. float
data of mixed magnitudes makes the order visible: the test first checks that a scan
associated chunk-wise (what a tiled parallel scan would compute) differs from NumPy's.
"""

from __future__ import annotations

import numpy as np
import pytest
from _bits import assert_same_bits

import tracejit as tj
import tracejit.numpy as tnp

DTYPES = [np.float32, np.float64, np.int32, np.complex64, np.complex128]  # 1-byte: bool below
# (shape, axis): one row of 4097 (three chunks), ragged chunks (1000 = 15 * 64 + 40), short
# rows (several per thread), 40 rows of 37 (whole rows for 4-byte types, chunks of 32 with a
# ragged tile of 8 rows for 8-byte ones, chunks of 16: half a warp a row, for complex128),
# strided axes (post 5, post 1000), size 1 and size 0 axes
SHAPES = [((1, 4097), -1), ((3, 1000), 1), ((1000, 3), 1), ((1000, 3), 0), ((40, 37), 1), ((4, 33, 5), 1),
          ((4, 33, 5), -1), ((2, 1), 1), ((1, 1), 0), ((0, 5), 1), ((5, 0), 1), ((5, 0), 0)]  # fmt: skip


def _data(dtype, shape, rng, near_one=False):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -50, 50, shape).astype(dt)
    if near_one:  # long products stay finite
        v = np.exp(rng.normal(size=shape) * 0.01) * rng.choice([-1.0, 1.0], shape)
    else:  # mixed magnitudes: every addition rounds
        v = rng.normal(size=shape) * np.exp(rng.normal(size=shape) * 4)
    if dt.kind == "c":
        v = v * np.exp(1j * rng.uniform(0, 2 * np.pi, shape))
    v = v.astype(dt)
    v.flat[:: max(v.size // 7, 1)] = np.nan if dt.kind in "fc" else v.flat[0]
    return v


def _scans(m, xs, ps):
    outs = []
    for (x, p), (_, axis) in zip(zip(xs, ps), SHAPES):
        outs += [m.cumsum(x, axis=axis), m.cumprod(p, axis=axis)]
        if x.dtype.kind in "fc":
            outs += [m.nancumsum(x, axis=axis), m.nancumprod(p, axis=axis)]
    return outs


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_tile_and_chunk_boundary_matches_numpy(device, dtype):
    rng = np.random.default_rng(5)
    xs = [_data(dtype, s, rng) for s, _ in SHAPES]
    ps = [_data(dtype, s, rng, near_one=True) for s, _ in SHAPES]
    got = tj.jit(lambda xs, ps: _scans(tnp, xs, ps), device=device)(xs, ps)
    with np.errstate(all="ignore"):
        want = _scans(np, xs, ps)
    for g, w in zip(got, want, strict=True):
        assert_same_bits(g, w)


def _chunkwise_cumsum(x, width):
    """x's cumsum (last axis) associated as a parallel tiled scan would: each chunk summed
    from its own start, then the running total of the chunks before it added."""
    out, carry = np.empty_like(x), np.zeros(x.shape[:-1], x.dtype)
    for c0 in range(0, x.shape[-1], width):
        out[..., c0 : c0 + width] = carry[..., None] + np.cumsum(x[..., c0 : c0 + width], -1)
        carry = out[..., min(c0 + width, x.shape[-1]) - 1]
    return out


def test_order_is_numpys_where_another_association_rounds_otherwise(device):
    rng = np.random.default_rng(6)
    x = (rng.normal(size=(2100, 70)) * np.exp(rng.normal(size=(2100, 70)) * 4)).astype(np.float32)
    x[0, :3] = [1.0, 1e8, -1e8]  # (1 + 1e8) - 1e8 is 0 in float32; 1 + (1e8 - 1e8) is 1
    want = (np.cumsum(x, 1), np.cumsum(x, 0), np.cumprod(x[:, :8], 1), np.cumsum(x.T, 1))
    for width in (2, 16, 32, 64):  # the data tells the orders apart
        assert not np.array_equal(_chunkwise_cumsum(x, width), want[0])
        assert not np.array_equal(_chunkwise_cumsum(x.T, width), want[3])
    # 2100 rows of 70: 66 tiles of 32 rows (more than the emulator's 64 blocks), 2 chunks
    fun = lambda x: (tnp.cumsum(x, 1), tnp.cumsum(x, 0), tnp.cumprod(x[:, :8], 1),
                     tnp.cumsum(x.T, 1))  # fmt: skip
    for g, w in zip(tj.jit(fun, device=device)(x), want, strict=True):
        assert_same_bits(g, w)


def test_bool_scans_keep_numpy_dtypes_and_values(device):
    b = np.random.default_rng(7).random((70, 130)) > 0.02
    fun = lambda m, b: (m.cumprod(b, axis=1, dtype=bool), m.cumsum(b, axis=1, dtype=bool),
                        m.cumprod(b, axis=0), m.cumsum(b, axis=-1), m.cumsum(b.T, axis=1))  # fmt: skip
    for g, w in zip(tj.jit(lambda b: fun(tnp, b), device=device)(b), fun(np, b), strict=True):
        assert_same_bits(g, w)
