"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes.

>>> leaves, treedef = tree_flatten({"w": 1, "b": (2, None)})
>>> leaves
[2, 1]
>>> tree_unflatten(treedef, [20, 10])
{'b': (20, None), 'w': 10}
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from tracejit.errors import TracejitTypeError, TracejitValueError

_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Register `cls`: `flatten(obj) -> (children, aux)`, `unflatten(aux, children) -> obj`.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))
    """
    if cls in _REGISTRY or cls in (tuple, list, dict, type(None)):
        raise TracejitValueError(f"{cls.__name__} is already a pytree node type")
    _REGISTRY[cls] = (flatten, unflatten)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


@dataclass(frozen=True)
class PyTreeDef:
    """The structure of a pytree: its node type, auxiliary data and children (leaf: None)."""

    kind: Any  # None for a leaf, else the node's type
    aux: Hashable = None
    children: tuple[PyTreeDef, ...] = ()

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def unflatten(self, leaves) -> Any:
        """`tree_unflatten(self, leaves)`, as JAX's `PyTreeDef.unflatten`."""
        return tree_unflatten(self, leaves)

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind is dict:
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children))
            return "{" + inner + "}"
        if self.kind is type(None):
            return "None"
        return f"{self.kind.__name__}({inner})"


_LEAF = PyTreeDef(None)


def _sorted_keys(x: dict) -> tuple:
    try:
        return tuple(sorted(x))
    except TypeError:
        raise TracejitTypeError(
            f"a pytree dict's keys must sort (leaves follow the sorted keys); got {list(x)!r}"
        ) from None


def _dict_keys(td: PyTreeDef) -> tuple | None:
    """The keys of a dict-like node (dict, OrderedDict, defaultdict), None for others."""
    if td.kind is dict or td.kind is OrderedDict:
        return td.aux
    return td.aux[1] if td.kind is defaultdict else None


def _children(x) -> tuple[Any, Hashable, list] | None:
    """(kind, aux, children) for a node, None for a leaf. As JAX: dict and defaultdict
    children in sorted key order, OrderedDict's in insertion order."""
    t = type(x)
    if x is None:
        return type(None), None, []
    if t is tuple or t is list:
        return t, None, list(x)
    if t is dict:
        keys = _sorted_keys(x)
        return dict, keys, [x[k] for k in keys]
    if t is OrderedDict:
        keys = tuple(x)
        return t, keys, [x[k] for k in keys]
    if t is defaultdict:
        keys = _sorted_keys(x)
        return t, (x.default_factory, keys), [x[k] for k in keys]
    if _is_namedtuple(x):
        return t, None, list(x)
    if t in _REGISTRY:
        children, aux = _REGISTRY[t][0](x)
        return t, aux, list(children)
    return None


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """Leaves in order (dict keys sorted) and the structure to rebuild the tree."""
    leaves: list = []

    def go(x) -> PyTreeDef:
        node = None if (is_leaf is not None and is_leaf(x)) else _children(x)
        if node is None:
            leaves.append(x)
            return _LEAF
        kind, aux, children = node
        return PyTreeDef(kind, aux, tuple(go(c) for c in children))

    treedef = go(tree)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    """Rebuild a tree of `treedef`'s structure from `leaves`."""
    it = iter(leaves)

    def go(td: PyTreeDef):
        if td.kind is None:
            return next(it)
        children = [go(c) for c in td.children]
        if td.kind is type(None):
            return None
        if td.kind is tuple or td.kind is list:
            return td.kind(children)
        if td.kind is dict or td.kind is OrderedDict:
            return td.kind(zip(td.aux, children))
        if td.kind is defaultdict:
            return defaultdict(td.aux[0], zip(td.aux[1], children))
        if td.kind in _REGISTRY:
            return _REGISTRY[td.kind][1](td.aux, children)
        return td.kind(*children)  # namedtuple

    try:
        out = go(treedef)
    except StopIteration:
        raise TracejitValueError(
            f"tree_unflatten: fewer leaves than the structure's {treedef.num_leaves}"
        ) from None
    if next(it, _SENTINEL) is not _SENTINEL:
        raise TracejitValueError("tree_unflatten: more leaves than the structure holds")
    return out


_SENTINEL = object()


def tree_leaves(tree, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` leaf-wise over `tree` and trees of the same structure (`is_leaf` as in
    `tree_flatten`).

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": 2}, {"x": 10, "y": 20})
    {'x': 11, 'y': 22}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise TracejitValueError(f"tree_map: structures differ: {treedef} and {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def keystr_paths(treedef: PyTreeDef, prefix: str) -> list[str]:
    """A readable path for every leaf, e.g. `params['w1']` or `args[1][0]`."""
    out: list[str] = []

    def go(td: PyTreeDef, path: str):
        if td.kind is None:
            out.append(path)
            return
        keys = _dict_keys(td)
        if keys is not None:
            for k, c in zip(keys, td.children):
                go(c, f"{path}[{k!r}]")
        elif hasattr(td.kind, "_fields"):
            for name, c in zip(td.kind._fields, td.children):
                go(c, f"{path}.{name}")
        else:
            for i, c in enumerate(td.children):
                go(c, f"{path}[{i}]")

    go(treedef, prefix)
    return out
