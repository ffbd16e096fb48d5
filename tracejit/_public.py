"""Modules that show only their public names: `__all__` plus private (`_`) names.

`tj.random.np` or `tj.nn.Tracer` would otherwise be attributes of those modules (their
imports), which tab completion and `dir()` offer as if they were API. The functions of such a
module still see every global: they look names up in the module's `__dict__`, not through
attribute access.

>>> import tracejit as tj
>>> hasattr(tj.random, "np"), hasattr(tj.random, "uniform")
(False, True)
"""

from __future__ import annotations

import sys
import types

from tracejit.errors import TracejitAttributeError


class _PublicModule(types.ModuleType):
    def __getattribute__(self, name: str):
        if name.startswith("_"):
            return super().__getattribute__(name)
        namespace = super().__getattribute__("__dict__")
        if name in namespace.get("__all__", ()):
            return namespace[name]
        raise TracejitAttributeError(
            f"module {namespace['__name__']!r} has no public attribute {name!r} "
            f"(its public names are listed in __all__)"
        )

    def __dir__(self):
        return sorted(super().__getattribute__("__dict__").get("__all__", ()))


def defined_here(namespace: dict, exclude=(), extra=()) -> list[str]:
    """The `__all__` of a module of functions: the public callables its `namespace` (its
    `globals()`) defines, less the helper names `exclude`, plus `extra` (names bound from
    elsewhere: aliases, constants)."""
    module = namespace["__name__"]
    return [
        n
        for n, v in list(namespace.items())
        if callable(v) and getattr(v, "__module__", None) == module and not n.startswith("_")
        if n not in exclude
    ] + list(extra)


def only_public_names(module_name: str) -> None:
    """Make the module `module_name` (already in sys.modules) show only its public names."""
    sys.modules[module_name].__class__ = _PublicModule
