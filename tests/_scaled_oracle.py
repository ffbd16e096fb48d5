"""JAX's block quantization (jax/_src/cudnn/scaled_matmul_stablehlo.py: `quantize`,
`cast_to_e8m0_with_rounding_up`, `scaled_dot_bwd`) restated in NumPy, with ml_dtypes' casts
as the rounding: the oracle for tracejit.nn.scaled_dot_general's tests."""

from __future__ import annotations

import ml_dtypes
import numpy as np

E4M3, E2M1, E8M0 = ml_dtypes.float8_e4m3fn, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e8m0fnu
MODES = {"mxfp8": (32, E4M3), "nvfp4": (16, E2M1)}


def e8m0_round_up(s):
    """JAX's cast_to_e8m0_with_rounding_up on float32 bits, read back through ml_dtypes."""
    bits = np.asarray(s, np.float32).view(np.uint32)
    exp, mant = bits >> 23, bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    return np.where(up, exp + 1, exp).astype(np.uint8).view(E8M0).astype(np.float32)


def quantize(x, mode: str, global_scale=None):
    """(B, M, K) -> (data, scales) as float32 arrays of the formats' values."""
    block, data_type = MODES[mode]
    b, m, k = x.shape
    xb = x.reshape(b, m, k // block, block)
    data_max = x.dtype.type(float(ml_dtypes.finfo(data_type).max))
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "mxfp8":
            scales = e8m0_round_up(np.abs(xb).max(-1, keepdims=True) / data_max)
            y = xb / scales.astype(x.dtype)
        else:
            xb = xb / global_scale
            s = np.clip(np.abs(xb).max(-1, keepdims=True) / data_max, 0, 448)
            scales = s.astype(E4M3).astype(np.float32)
            y = xb / scales
    data = np.clip(y, -data_max, data_max).astype(data_type).astype(np.float32)
    return data.reshape(x.shape), scales.reshape(b, m, k // block)


def quantized_matmul(a, b, mode: str, ga=None, gb=None, mode_b=None):
    """(B, M, K) x (B, N, K) of the quantized operands (rhs's in `mode_b` if given), in
    float64, nvfp4 operands' global scales multiplied back."""
    mode_b = mode_b or mode
    (aq, sa), (bq, sb) = quantize(a, mode, ga), quantize(b, mode_b, gb)
    da = aq.astype(np.float64) * np.repeat(sa, a.shape[-1] // sa.shape[-1], -1)
    db = bq.astype(np.float64) * np.repeat(sb, b.shape[-1] // sb.shape[-1], -1)
    out = np.einsum("bmk,bnk->bmn", da, db)
    for m, g in ((mode, ga), (mode_b, gb)):
        out = out * np.float64(g) if m == "nvfp4" else out
    return out


def _padded(x, block: int):
    """Zeros appended along the last axis to whole blocks (where JAX would assert)."""
    return np.pad(x, [(0, 0), (0, 0), (0, -x.shape[-1] % block)])


def gradients(a, b, g, mode: str, gs=None):
    """JAX's scaled_dot_bwd for (B, M, K), (B, N, K) and the cotangent g (B, M, N)."""
    at, bt, gt = (np.swapaxes(v, 1, 2) for v in (a, b, g))
    if mode == "mxfp8":
        ga = quantized_matmul(_padded(g, 32), _padded(bt, 32), mode)
        return ga, quantized_matmul(_padded(gt, 32), _padded(at, 32), mode)
    limit = gs * np.float32(6) * np.float32(448)
    ga = np.where(np.abs(a) <= limit, g.astype(np.float64) @ b, 0)
    gb = np.where(np.abs(b) <= limit, gt.astype(np.float64) @ a, 0)
    return ga, gb
