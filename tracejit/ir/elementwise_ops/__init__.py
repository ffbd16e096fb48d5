"""The built-in elementwise primitives, one entry each, grouped by family.

Each family module declares its primitives with `entry.elementwise_op(...)` (or a shorthand
such as `entry.libm_unary`): one call carries the shape/dtype rule, NumPy reference, cost,
fusion class (INLINE, from the kind), VJP, C rendering and the NumPy names `tracejit.numpy`
wraps it under; batching comes from the elementwise kind. Adding a built-in elementwise
primitive is one entry in its family's module. `select` and `convert`, whose shape/dtype rules
are their own, are `register` entries in `select_convert`; `bitcast_convert_type` in
`bitcast`.
"""

from tracejit.ir.elementwise_ops import (  # noqa: F401  (register their primitives)
    arith,
    bitcast,
    exp_log,
    logic,
    rounding,
    select_convert,
    sign,
    trig,
)
from tracejit.ir.elementwise_ops.entry import TNP_NAMES

__all__ = ["TNP_NAMES"]
