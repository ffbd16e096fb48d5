"""tracejit: a tracing JIT for NumPy code, with its own compiler.

>>> import numpy as np, tracejit as tj
>>> @tj.jit
... def f(x):
...     return np.tanh(x) + 1.0
>>> f(np.zeros(2, np.float32))
array([1., 1.], dtype=float32)
"""

from tracejit import (
    distributed,
    errors,
    lax,
    nn,
    numpy,
    random,
)
from tracejit import numpy as tnp  # noqa: F401
from tracejit.batching import vmap
from tracejit.cache import cache_info
from tracejit.config import config
from tracejit.custom import custom_jvp, custom_vjp
from tracejit.devices import device_get, device_put
from tracejit.jacobians import hessian, jacfwd, jacrev, jvp, linearize
from tracejit.profile import profile
from tracejit.pytree import (
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from tracejit.remat import checkpoint, checkpoint_policies, remat
from tracejit.shapes import block_until_ready, eval_shape
from tracejit.tracer.jit import ShapeDtypeStruct, disable_jit, jit, make_ir
from tracejit.transforms import grad, value_and_grad, vjp

__version__ = "0.1.0"

__all__ = [
    "ShapeDtypeStruct",
    "block_until_ready",
    "cache_info",
    "checkpoint",
    "checkpoint_policies",
    "config",
    "custom_jvp",
    "custom_vjp",
    "device_get",
    "device_put",
    "disable_jit",
    "distributed",
    "errors",
    "eval_shape",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linearize",
    "make_ir",
    "nn",
    "numpy",
    "profile",
    "random",
    "register_pytree_node",
    "remat",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
    "value_and_grad",
    "vjp",
    "vmap",
]
