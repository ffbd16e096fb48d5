"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes.

>>> leaves, treedef = tree_flatten({"w": 1, "b": (2, None)})
>>> leaves
[2, 1]
>>> tree_unflatten(treedef, [20, 10])
{'b': (20, None), 'w': 10}
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from tracejit._tree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    SequenceKey,
    keystr,
)
from tracejit.errors import TracejitTypeError, TracejitValueError

# cls -> (flatten, unflatten, flatten_with_keys or None)
_REGISTRY: dict[type, tuple[Callable, Callable, Callable | None]] = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Register `cls`: `flatten(obj) -> (children, aux)`, `unflatten(aux, children) -> obj`.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))
    """
    _register(cls, flatten, unflatten, None)


def register_pytree_with_keys(
    cls: type,
    flatten_with_keys: Callable,
    unflatten: Callable,
    flatten: Callable | None = None,
) -> None:
    """Register `cls` with a key for each child, for its key paths:
    `flatten_with_keys(obj) -> (((key, child), ...), aux)` (keys such as `GetAttrKey`),
    `unflatten(aux, children) -> obj`; `flatten` as in `register_pytree_node` (by default
    the children of `flatten_with_keys`).

    >>> class Named:
    ...     def __init__(self, **kw): self.kw = kw
    >>> register_pytree_with_keys(
    ...     Named,
    ...     lambda n: ([(DictKey(k), n.kw[k]) for k in sorted(n.kw)], tuple(sorted(n.kw))),
    ...     lambda keys, children: Named(**dict(zip(keys, children))),
    ... )
    >>> [keystr(p) for p, _ in tree_leaves_with_path(Named(b=1, a=2))]
    ["['a']", "['b']"]
    """

    def children_and_aux(obj):
        pairs, aux = flatten_with_keys(obj)
        return [child for _, child in pairs], aux

    _register(cls, flatten or children_and_aux, unflatten, flatten_with_keys)


def _register(cls: type, flatten, unflatten, flatten_with_keys) -> None:
    if cls in _REGISTRY or cls in _BUILTIN_NODES:
        raise TracejitValueError(f"{cls.__name__} is already a pytree node type")
    _REGISTRY[cls] = (flatten, unflatten, flatten_with_keys)


_BUILTIN_NODES = (tuple, list, dict, type(None), OrderedDict, defaultdict)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


@dataclass(frozen=True)
class PyTreeDef:
    """The structure of a pytree: its node type, auxiliary data and the structures of its
    children (leaf: kind None). The methods are JAX's `PyTreeDef`'s.

    >>> td = tree_structure({"a": (1, None), "b": [2]})
    >>> td.num_leaves, td.num_nodes, td.children()
    (2, 6, [tuple(*, None), list(*)])
    >>> td.flatten_up_to({"a": ("x", None), "b": [[3, 4]]})
    ['x', [3, 4]]
    >>> tree_structure([0, 0]).compose(tree_structure((0, 0)))
    list(tuple(*, *), tuple(*, *))
    """

    kind: Any  # None for a leaf, else the node's type
    aux: Hashable = None
    subtrees: tuple[PyTreeDef, ...] = ()

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.subtrees)

    @property
    def num_nodes(self) -> int:
        """Nodes and leaves (a `None` counts one, as in JAX)."""
        return 1 + sum(c.num_nodes for c in self.subtrees)

    def children(self) -> list[PyTreeDef]:
        """The structures of the immediate children (`[]` for a leaf or `None`)."""
        return list(self.subtrees)

    def node_data(self) -> tuple[type, Hashable] | None:
        """`(node type, auxiliary data)`, None for a leaf (a dict's data: its keys)."""
        return None if self.kind is None else (self.kind, self.aux)

    def unflatten(self, leaves) -> Any:
        """`tree_unflatten(self, leaves)`, as JAX's `PyTreeDef.unflatten`."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this structure's leaves (it must be a prefix of
        `tree`'s structure; else a TracejitValueError saying where they part)."""
        return _flatten_up_to(self, tree, "PyTreeDef.flatten_up_to", "the tree", "the treedef")

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with `inner` in place of each leaf."""
        if not isinstance(inner, PyTreeDef):
            raise TracejitTypeError(f"PyTreeDef.compose: needs a PyTreeDef, got {inner!r}")
        if self.kind is None:
            return inner
        return replace(self, subtrees=tuple(c.compose(inner) for c in self.subtrees))

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.subtrees)
        if self.kind is dict:
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.subtrees))
            return "{" + inner + "}"
        if self.kind is type(None):
            return "None"
        return f"{self.kind.__name__}({inner})"


_LEAF = PyTreeDef(None)


@dataclass(frozen=True)
class _KeyedTreeDef(PyTreeDef):
    """A node of a type registered with keys: the children's key entries ride along for key
    paths (not compared; a separate class keeps PyTreeDef's construction, on every jitted
    call's path, at three fields)."""

    keys: tuple = field(default=(), compare=False)


def _node(kind, aux, children: tuple, keys: tuple | None) -> PyTreeDef:
    return (
        PyTreeDef(kind, aux, children) if keys is None else _KeyedTreeDef(kind, aux, children, keys)
    )


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


def _children(x) -> tuple[Any, Hashable, list, tuple | None] | None:
    """(kind, aux, children, keys) for a node, None for a leaf; keys: the children's key
    entries where the type was registered with them, else None. As JAX: dict and defaultdict
    children in sorted key order, OrderedDict's in insertion order."""
    t = type(x)
    if x is None:
        return type(None), None, [], None
    if t is tuple or t is list:
        return t, None, list(x), None
    if t is dict:
        keys = _sorted_keys(x)
        return dict, keys, [x[k] for k in keys], None
    if t is OrderedDict:
        keys = tuple(x)
        return t, keys, [x[k] for k in keys], None
    if t is defaultdict:
        keys = _sorted_keys(x)
        return t, (x.default_factory, keys), [x[k] for k in keys], None
    if _is_namedtuple(x):
        return t, None, list(x), None
    if t in _REGISTRY:
        flatten, _, with_keys = _REGISTRY[t]
        if with_keys is None:
            children, aux = flatten(x)
            return t, aux, list(children), None
        pairs, aux = with_keys(x)
        pairs = list(pairs)
        return t, aux, [child for _, child in pairs], tuple(key for key, _ in pairs)
    return None


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """Leaves in order (dict keys sorted) and the structure to rebuild the tree."""
    return _flatten(tree, None if is_leaf is None else lambda _, x: is_leaf(x), False)


def _flatten(tree, is_leaf, with_paths: bool) -> tuple[list, PyTreeDef]:
    """`tree_flatten` with `is_leaf(path, x)`; the paths (of key entries) are computed only
    `with_paths` (else None)."""
    leaves: list = []

    def go(x, path) -> PyTreeDef:
        node = None if (is_leaf is not None and is_leaf(path, x)) else _children(x)
        if node is None:
            leaves.append(x)
            return _LEAF
        kind, aux, children, keys = node
        if not with_paths:
            return _node(kind, aux, tuple([go(c, None) for c in children]), keys)
        entries = _child_keys(_node(kind, aux, (_LEAF,) * len(children), keys))
        subtrees = [go(c, (*path, key)) for c, key in zip(children, entries)]
        return _node(kind, aux, tuple(subtrees), keys)

    treedef = go(tree, () if with_paths else None)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    """Rebuild a tree of `treedef`'s structure from `leaves`."""
    it = iter(leaves)

    def go(td: PyTreeDef):
        if td.kind is None:
            return next(it)
        children = [go(c) for c in td.subtrees]
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


def _child_keys(td: PyTreeDef) -> list[KeyEntry]:
    """The key entry of each child of the node `td`, as JAX names them."""
    if isinstance(td, _KeyedTreeDef):
        return list(td.keys)
    keys = _dict_keys(td)
    if keys is not None:
        return [DictKey(k) for k in keys]
    if td.kind is tuple or td.kind is list:
        return [SequenceKey(i) for i in range(len(td.subtrees))]
    if _is_namedtuple_type(td.kind):
        return [GetAttrKey(name) for name in td.kind._fields]
    return [FlattenedIndexKey(i) for i in range(len(td.subtrees))]


def _is_namedtuple_type(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields")


def treedef_paths(treedef: PyTreeDef) -> list[KeyPath]:
    """The key path of every leaf of `treedef`, in leaf order."""
    out: list[KeyPath] = []

    def go(td: PyTreeDef, path: KeyPath):
        if td.kind is None:
            out.append(path)
            return
        for key, child in zip(_child_keys(td), td.subtrees):
            go(child, (*path, key))

    go(treedef, ())
    return out


def keystr_paths(treedef: PyTreeDef, prefix: str) -> list[str]:
    """A readable path for every leaf, e.g. `params['w1']` or `args[1][0]`."""
    return [prefix + keystr(path) for path in treedef_paths(treedef)]


def tree_flatten_with_path(
    tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """`tree_flatten` with each leaf's key path: `([(path, leaf), ...], treedef)`;
    `is_leaf(path, x)` where `is_leaf_takes_path`.

    >>> tree_flatten_with_path({"b": [7], "a": 8})[0]
    [((DictKey(key='a'),), 8), ((DictKey(key='b'), SequenceKey(idx=0)), 7)]
    """
    leaves, treedef = _flatten_for_paths(tree, is_leaf, is_leaf_takes_path)
    return list(zip(treedef_paths(treedef), leaves)), treedef


def _flatten_for_paths(tree, is_leaf, is_leaf_takes_path: bool) -> tuple[list, PyTreeDef]:
    if is_leaf is None or not is_leaf_takes_path:
        return tree_flatten(tree, is_leaf)
    return _flatten(tree, is_leaf, True)


def tree_leaves_with_path(
    tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The `(path, leaf)` pairs of `tree_flatten_with_path`.

    >>> [(keystr(p), x) for p, x in tree_leaves_with_path([5, {"k": 6}])]
    [('[0]', 5), ("[1]['k']", 6)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def _node_text(kind, aux, n: int) -> str:
    if kind is None or kind is type(None):
        return "a leaf" if kind is None else "None"
    keys = _dict_keys(PyTreeDef(kind, aux))
    what = f"keys {list(keys)}" if keys is not None else f"{n} children"
    return f"a {kind.__name__} node with {what}"


class _Mismatch(Exception):
    """Where `_flatten_up_to` found the two structures apart: the key path is gathered while
    the walk unwinds, so the walk itself builds no paths."""

    def __init__(self, first: str, other: str):
        self.first, self.other, self.path = first, other, ()


def _flatten_up_to(
    treedef: PyTreeDef, tree, what: str, which: str, prefix: str = "the first tree"
) -> list:
    """The subtrees of `tree` at the leaves of `treedef`, which must be a prefix of its
    structure (JAX's `flatten_up_to`); a named error where it is not (naming `tree` as
    `which`, and `treedef`'s tree as `prefix`)."""
    out: list = []

    def go(td: PyTreeDef, x):
        if td.kind is None:
            out.append(x)
            return
        kind, aux, children, _ = _children(x) or (None, None, [], None)
        if kind is not td.kind or aux != td.aux or len(children) != len(td.subtrees):
            n = len(td.subtrees)
            raise _Mismatch(_node_text(td.kind, td.aux, n), _node_text(kind, aux, len(children)))
        for i, (child_td, child) in enumerate(zip(td.subtrees, children)):
            try:
                go(child_td, child)
            except _Mismatch as m:
                m.path = (_child_keys(td)[i], *m.path)
                raise

    try:
        go(treedef, tree)
    except _Mismatch as m:
        raise TracejitValueError(
            f"{what}: {which} has structure {tree_structure(tree)}, of which {prefix}'s "
            f"structure {treedef} must be a prefix; at {keystr(m.path) or 'the root'} "
            f"{prefix} has {m.first} but {which} has {m.other}"
        ) from None
    return out


def _leaves_of_all(
    what: str, tree, rest, is_leaf, is_leaf_takes_path: bool = False
) -> tuple[PyTreeDef, list, list]:
    leaves, treedef = _flatten_for_paths(tree, is_leaf, is_leaf_takes_path)
    others = [_flatten_up_to(treedef, r, what, f"argument {i + 2}") for i, r in enumerate(rest)]
    return treedef, leaves, others


def tree_map(f: Callable, tree, *rest, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` leaf-wise over `tree` and the trees `rest`, as `jax.tree_util.tree_map`:
    each of `rest` has the structure of `tree` or `tree`'s as a prefix (then `f` gets the
    whole subtree where `tree` has a leaf); `is_leaf` as in `tree_flatten`, for `tree`.

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": 2}, {"x": 10, "y": 20})
    {'x': 11, 'y': 22}
    >>> tree_map(lambda a, b: (a, b), [1, 2], [(3, 4), 5])
    [(1, (3, 4)), (2, 5)]
    """
    treedef, leaves, others = _leaves_of_all("tree_map", tree, rest, is_leaf)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(
    f: Callable, tree, *rest, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> Any:
    """`tree_map` calling `f(path, leaf, *others)` with each leaf's key path (and
    `is_leaf(path, x)` where `is_leaf_takes_path`).

    >>> tree_map_with_path(lambda p, x: keystr(p), {"a": (0, 0)})
    {'a': ("['a'][0]", "['a'][1]")}
    """
    treedef, leaves, others = _leaves_of_all(
        "tree_map_with_path", tree, rest, is_leaf, is_leaf_takes_path
    )
    paths = treedef_paths(treedef)
    return tree_unflatten(treedef, [f(p, *xs) for p, *xs in zip(paths, leaves, *others)])


def tree_reduce(function: Callable, tree, initializer: Any = _SENTINEL, is_leaf=None) -> Any:
    """`functools.reduce(function, leaves[, initializer])` over the leaves of `tree`.

    >>> tree_reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]})
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is not _SENTINEL:
        return functools.reduce(function, leaves, initializer)
    if not leaves:
        raise TracejitTypeError("tree_reduce: a tree with no leaves needs an initializer")
    return functools.reduce(function, leaves)


def tree_all(tree, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of `tree` is true (`True` for no leaves), as `all`.

    >>> tree_all({"a": True, "b": (1, None)}), tree_all([1, 0]), tree_all([])
    (True, False, True)
    """
    return all(tree_leaves(tree, is_leaf))
