"""`bitcast_convert_type` with `jax.lax`'s semantics for same-size dtypes.

>>> import numpy as np, tracejit as tj
>>> tj.jit(lambda x: tj.lax.bitcast_convert_type(x, np.uint32))(np.float32([1.0, -0.0]))
array([1065353216, 2147483648], dtype=uint32)
"""

from __future__ import annotations

from tracejit.ir import dtypes
from tracejit.tracer.core import bind


def bitcast_convert_type(operand, new_dtype):
    """The bits of `operand` read as `new_dtype`, of the same item size (NumPy's `.view`);
    float16/bfloat16 keep their 16 bits. No gradient flows through it."""
    return bind("bitcast_convert_type", operand, dtype=dtypes.canonical(new_dtype))
