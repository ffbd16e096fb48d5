"""`bitcast_convert_type`: an array's bits read as another dtype of the same item size
(`jax.lax.bitcast_convert_type`, NumPy's `.view`), elementwise and exact on every path.

Its C rendering is `tj_bit_cast<To>(x)` (a union, the same text in C++, CUDA and the
emulator); float16/bfloat16 operands and results are read and written as their 16 bits, never
through float32. No derivative flows through it (the result is not a differentiable function
of the operand's value), as in JAX.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import TracejitTypeError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import VJP_RULES, zero_vjp
from tracejit.ir.c_render import C_LOW_PRECISION_RULES, C_RULES
from tracejit.ir.c_types import c_type
from tracejit.ir.primitives import ELEMENTWISE, register


def _bitcast_rule(avals, dtype):
    ((shape, src, _),) = avals
    dst = dtypes.canonical(dtype)
    if src.itemsize != dst.itemsize or src == np.bool_ or dst == np.bool_:
        raise TracejitTypeError(
            f"bitcast_convert_type: {src} and {dst} must be non-bool dtypes of one item size"
        )
    if dtypes.is_complex(src) or dtypes.is_complex(dst):
        raise TracejitTypeError("bitcast_convert_type: complex dtypes are not supported")
    return (shape, dst, False)


def _bitcast_c(args, dt, out_dt, attrs, uses, d) -> str:
    return args[0] if dt == out_dt else f"tj_bit_cast<{c_type(out_dt)}>({args[0]})"


register(
    "bitcast_convert_type",
    ELEMENTWISE,
    _bitcast_rule,
    lambda x, dtype: np.asarray(x).view(dtype),
    rules={
        VJP_RULES: zero_vjp,
        C_RULES: _bitcast_c,
        C_LOW_PRECISION_RULES: lambda rule, *args: rule(*args),  # the 16 bits as they are
    },
)
