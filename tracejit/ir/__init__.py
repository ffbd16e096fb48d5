"""The IR: graphs, the primitive registry, the reference interpreter and transformations.

`ir` imports no tracer and no backend: dependencies point down the pipeline.
"""

from tracejit.ir import (  # noqa: F401  (registers every primitive)
    autodiff_control,
    control,
    elementwise_ops,
    fft_prims,
    forward_control,
    linalg_eig,
    linalg_prims,
    linalg_qr,
    linalg_svd,
    primitives,
    prng,
    searchsorted,
    sorting,
    structural,
)
from tracejit.ir.graph import ConstValue, Graph, Node, Value, format_graph, verify

__all__ = ["ConstValue", "Graph", "Node", "Value", "format_graph", "primitives", "verify"]
