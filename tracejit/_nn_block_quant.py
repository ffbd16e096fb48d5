"""Block-scaled quantization for `tracejit.nn.scaled_dot_general`, as JAX's (its cuDNN
scaled-matmul module): `BlockScaleConfig`, `get_scaled_dot_general_config` and `quantize`.

tracejit has no 8-bit or 4-bit float storage, so a quantized array is a float32 array
holding values of the target format (ml_dtypes' float8_e4m3fn or float4_e2m1fn), and a
scale a float32 array holding float8_e8m0fnu or float8_e4m3fn values. The rounding is
exact float arithmetic, equal bit for bit to a cast to the format (ties to even): dividing
by the format's unit in the last place, a power of two, is exact, and `rint` rounds half
to even. tests/backend/test_nn_block_quant.py checks it against ml_dtypes' casts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import ShapeError, TracejitTypeError, TracejitValueError
from tracejit.numpy._core import shape_of

_E8M0_MIN = 2.0**-127  # float8_e8m0fnu's smallest value (its exponent field 0)


@dataclass
class BlockScaleConfig:
    """How one operand is quantized: `block_size` consecutive elements along the
    contracting axis share one scale of `scale_type`; the data are of `data_type`."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None) -> BlockScaleConfig:
    """The configuration of `mode` for `scaled_dot_general`, as `jax.nn`'s:

    - 'mxfp8': blocks of 32, float8_e4m3fn data, float8_e8m0fnu (power of two) scales;
    - 'nvfp4': blocks of 16, float4_e2m1fn data, float8_e4m3fn scales, and a float32
      `global_scale` (default `ones((1,))`) every element is divided by first.

    >>> import tracejit as tj
    >>> c = tj.nn.get_scaled_dot_general_config("mxfp8")
    >>> c.block_size, c.data_type.__name__, c.scale_type.__name__
    (32, 'float8_e4m3fn', 'float8_e8m0fnu')
    """
    if mode == "nvfp4":
        one = np.ones((1,), np.float32)
        gs = one if global_scale is None else global_scale
        return BlockScaleConfig(
            "nvfp4", 16, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn, gs, False
        )
    if mode == "mxfp8":
        return BlockScaleConfig(
            "mxfp8", 32, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu, None, False
        )
    raise TracejitValueError(
        f"get_scaled_dot_general_config: mode {mode!r}; use 'mxfp8' or 'nvfp4'"
    )


def _finfo(fmt, what: str):
    try:
        info = ml_dtypes.finfo(fmt)
    except (TypeError, ValueError):
        info = None
    if info is None or info.bits > 8 or info.nmant == 0:
        raise TracejitTypeError(
            f"scaled_dot_general: {what} {fmt!r} is not an 8- or 4-bit float with a mantissa "
            "(float8_e4m3fn, float8_e5m2, float4_e2m1fn)"
        )
    return info


def round_to_format(y, fmt):
    """float32 y (within +-max of `fmt`) rounded to the nearest value of the ml_dtypes float type
    `fmt`, ties to even: rint(y / ulp) * ulp with ulp the power of two spacing of fmt's
    values in y's binade (the subnormal spacing below the smallest normal)."""
    info = _finfo(fmt, "format")
    a = tnp.absolute(y)
    ulp = tnp.full_like(y, 2.0 ** (info.minexp - info.nmant))
    for k in range(info.minexp + 1, info.maxexp):
        ulp = tnp.where(tnp.greater_equal(a, 2.0**k), 2.0 ** (k - info.nmant), ulp)
    return tnp.multiply(tnp.rint(tnp.divide(y, ulp)), ulp)


def e8m0_scale(s):
    """s >= 0 as float32 rounded up to a power of two, at least 2**-127: JAX's
    `cast_to_e8m0_with_rounding_up` read back as float32 (0 there reads as 2**-127)."""
    s = tnp.astype(s, np.float32)
    m, _ = tnp.frexp(s)  # s = m * 2**e, m in [0.5, 1): s / m is 2**e exactly
    up = tnp.where(tnp.equal(m, 0.5), s, tnp.divide(s, tnp.where(tnp.equal(m, 0), 1.0, m)))
    return tnp.where(tnp.less_equal(s, _E8M0_MIN), np.float32(_E8M0_MIN), up)


def _global_scale(config):
    gs = config.global_scale
    dtype = getattr(gs, "dtype", None)
    if dtype is None or np.dtype(dtype) != np.float32:
        raise TracejitTypeError(
            "scaled_dot_general: an nvfp4 config needs a float32 global_scale, got "
            f"{getattr(gs, 'dtype', type(gs).__name__)}"
        )
    if int(np.prod(shape_of(gs))) != 1:
        raise ShapeError(f"scaled_dot_general: global_scale of shape {shape_of(gs)}; one value")
    return gs


def _working(x):
    """x as float32, the type the quantization divides in (JAX's default float type: a
    float64 input is rounded to float32 first, as JAX without x64 does)."""
    return tnp.astype(tnp.asarray(x), np.float32)


def _blocks(x, block: int):
    b, m, k = shape_of(x)
    if not isinstance(block, (int, np.integer)) or isinstance(block, bool):
        raise TracejitTypeError(f"scaled_dot_general: block_size {block!r} is not an int")
    if block <= 0 or k < block or k % block:
        raise ShapeError(
            f"scaled_dot_general: the contracting size {k} is not a positive multiple of "
            f"the block size {block}"
        )
    return tnp.reshape(x, (b, m, k // block, block))


def quantize(x, config: BlockScaleConfig):
    """(B, M, K) -> (data (B, M, K), scales (B, M, K // block)), both float32: JAX's
    `quantize`. A block's scale is its max |x| over the data format's max, rounded up to a
    power of two (mxfp8) or to the nearest float8_e4m3fn after dividing x by the global
    scale (nvfp4); the data are x over the scale, clipped to +-max and rounded to the
    format."""
    shape = shape_of(x)
    xb = _blocks(_working(x), config.block_size)
    data_max = float(_finfo(config.data_type, "data_type").max)
    if config.mode == "mxfp8":
        if np.dtype(config.scale_type) != np.dtype(ml_dtypes.float8_e8m0fnu):
            raise TracejitTypeError("scaled_dot_general: mxfp8 needs float8_e8m0fnu scales")
        amax = tnp.max(tnp.absolute(xb), axis=-1, keepdims=True)
        scales = e8m0_scale(tnp.divide(amax, data_max))
        y = tnp.divide(xb, tnp.astype(scales, xb.dtype))
    elif config.mode == "nvfp4":
        scale_max = float(_finfo(config.scale_type, "scale_type").max)
        xb = tnp.divide(xb, _global_scale(config))
        amax = tnp.max(tnp.absolute(xb), axis=-1, keepdims=True)
        s = tnp.clip(tnp.divide(amax, data_max), 0.0, scale_max)
        scales = tnp.astype(round_to_format(s, config.scale_type), np.float32)
        zero = tnp.equal(scales, 0)  # x / 0: +-inf clips to +-max; 0 / 0 (NaN) is stored as 0
        y = tnp.divide(xb, tnp.where(zero, 1.0, scales))
        y = tnp.where(zero, tnp.multiply(tnp.sign(xb), data_max), y)
    else:
        raise TracejitValueError(
            f"scaled_dot_general: config mode {config.mode!r}; use 'mxfp8' or 'nvfp4'"
        )
    data = round_to_format(tnp.clip(y, -data_max, data_max), config.data_type)
    data = tnp.reshape(tnp.astype(data, np.float32), shape)
    return data, tnp.reshape(scales, shape[:2] + (shape[2] // config.block_size,))


__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config"]
