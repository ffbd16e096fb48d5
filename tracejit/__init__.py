"""tracejit: a tracing JIT for NumPy code, with its own compiler.

>>> import numpy as np, tracejit as tj
>>> @tj.jit
... def f(x):
...     return np.tanh(x) + 1.0
>>> f(np.zeros(2, np.float32))
array([1., 1.], dtype=float32)

``import tracejit`` imports the config and ``tracejit.numpy`` (which installs the NumPy
surface on the tracer, so a traced ``np.tanh(x)`` works); every other public name below is
imported on first use (PEP 562), so ``tj.distributed``, ``tj.lax``, ``tj.random``, ``tj.nn``
cost nothing until touched.
"""

# ruff: noqa: TC004  (the TYPE_CHECKING imports are for static tools: PEP 562 loads them)

import importlib as _importlib
import sys as _sys
import types as _types
from importlib.util import find_spec as _find_spec
from typing import TYPE_CHECKING

from tracejit.config import config
from tracejit.errors import TracejitAttributeError as _NoAttribute

# The static view of the lazy names below (type checkers, IDEs, mkdocstrings): the same names as
# _ATTRIBUTES (tests/unit/test_lazy_import.py checks), imported at run time on first use.
if TYPE_CHECKING:
    from tracejit import distributed, errors, lax, nn, numpy, random, tree, tree_util
    from tracejit import numpy as tnp  # noqa: F401
    from tracejit.batching import vmap
    from tracejit.cache import cache_info
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

# public name -> the module that defines it (a submodule itself when the names are equal
# and the name is not in _SHADOWED)
_ATTRIBUTES = {
    "ShapeDtypeStruct": "tracejit.tracer.jit",
    "block_until_ready": "tracejit.shapes",
    "cache_info": "tracejit.cache",
    "checkpoint": "tracejit.remat",
    "checkpoint_policies": "tracejit.remat",
    "custom_jvp": "tracejit.custom",
    "custom_vjp": "tracejit.custom",
    "device_get": "tracejit.devices",
    "device_put": "tracejit.devices",
    "disable_jit": "tracejit.tracer.jit",
    "distributed": "tracejit.distributed",
    "errors": "tracejit.errors",
    "eval_shape": "tracejit.shapes",
    "grad": "tracejit.transforms",
    "hessian": "tracejit.jacobians",
    "jacfwd": "tracejit.jacobians",
    "jacrev": "tracejit.jacobians",
    "jit": "tracejit.tracer.jit",
    "jvp": "tracejit.jacobians",
    "lax": "tracejit.lax",
    "linearize": "tracejit.jacobians",
    "make_ir": "tracejit.tracer.jit",
    "nn": "tracejit.nn",
    "numpy": "tracejit.numpy",
    "profile": "tracejit.profile",
    "random": "tracejit.random",
    "register_pytree_node": "tracejit.pytree",
    "remat": "tracejit.remat",
    "tree": "tracejit.tree",
    "tree_flatten": "tracejit.pytree",
    "tree_leaves": "tracejit.pytree",
    "tree_map": "tracejit.pytree",
    "tree_structure": "tracejit.pytree",
    "tree_unflatten": "tracejit.pytree",
    "tree_util": "tracejit.tree_util",
    "value_and_grad": "tracejit.transforms",
    "vjp": "tracejit.transforms",
    "vmap": "tracejit.batching",
}
# names whose value is a function of the same name as its module: importing the module must
# not replace the function on the package (the import system sets `tracejit.<module>`)
_SHADOWED = frozenset({"profile", "remat"})
_ALIASES = {"tnp": "numpy"}

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
    "tree",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
    "tree_util",
    "value_and_grad",
    "vjp",
    "vmap",
]


def _resolve(name: str) -> object:
    module = _importlib.import_module(_ATTRIBUTES[name])
    if module.__name__ == f"{__name__}.{name}" and name not in _SHADOWED:
        return module
    return getattr(module, name)


class _Package(_types.ModuleType):
    """The package's module type: keeps a shadowed function when its module is imported."""

    def __getattr__(self, name: str) -> object:
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        if name in _ATTRIBUTES:
            value = _resolve(name)
        elif not name.startswith("_") and _find_spec(f"{__name__}.{name}"):
            value = _importlib.import_module(f"{__name__}.{name}")  # e.g. tj.devices, tj.ir
        else:
            raise _NoAttribute(f"module {__name__!r} has no attribute {name!r}")
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: object) -> None:
        if name in _SHADOWED and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(__all__) | set(_ALIASES))


_sys.modules[__name__].__class__ = _Package
# tracejit.numpy installs itself on Tracer (tests/unit/test_import_direction.py)
_importlib.import_module("tracejit.numpy")
