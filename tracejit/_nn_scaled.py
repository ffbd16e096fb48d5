"""`scaled_matmul`: block-scaled batched matmul, as `jax.nn.scaled_matmul`. Imported into
`tracejit.nn`.

Each operand's scales cover equal blocks of its contracting (last) axis; the product is the
einsum of the dequantized operands, accumulated in float32 (as JAX fixes it) and returned
in `preferred_element_type`. tracejit has no 8-bit float types, so operands arrive in any
float dtype (the arithmetic is the same); differentiable like any einsum.
"""

from __future__ import annotations

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import ShapeError
from tracejit.ir import dtypes


def _dequantize(x, scales, name: str):
    x, scales = tnp.asarray(x), tnp.asarray(scales)
    xs, ss = tnp.shape(x), tnp.shape(scales)
    if len(xs) != 3 or len(ss) != 3 or xs[:2] != ss[:2] or ss[2] == 0 or xs[2] % ss[2]:
        raise ShapeError(
            f"scaled_matmul: {name} of shape {xs} with scales of shape {ss}; expected "
            "(B, M, K) and (B, M, K // block)"
        )
    block = xs[2] // ss[2]
    x32, s32 = tnp.astype(x, np.float32), tnp.astype(scales, np.float32)
    return tnp.multiply(x32, tnp.repeat(s32, block, axis=-1))


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """(B, M, K) x (B, N, K) -> (B, M, N): einsum('BMK,BNK->BMN') of each operand times its
    scales repeated over blocks of K.

    >>> import numpy as np, tracejit as tj
    >>> a, b = np.ones((1, 2, 4)), np.ones((1, 3, 4))
    >>> tj.nn.scaled_matmul(a, b, np.full((1, 2, 2), 2.0), np.ones((1, 3, 1)))[0, 0]
    array([8., 8., 8.], dtype=float32)
    """
    a = _dequantize(lhs, lhs_scales, "lhs")
    b = _dequantize(rhs, rhs_scales, "rhs")
    if tnp.shape(a)[0] != tnp.shape(b)[0] or tnp.shape(a)[2] != tnp.shape(b)[2]:
        raise ShapeError(
            f"scaled_matmul: lhs {tnp.shape(a)} and rhs {tnp.shape(b)} differ in B or K"
        )
    out = tnp.einsum("bmk,bnk->bmn", a, b)
    return tnp.astype(out, dtypes.canonical(preferred_element_type))


__all__ = ["scaled_matmul"]
