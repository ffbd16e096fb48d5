"""`PyTreeDef`, the structure of a pytree: an optree `PyTreeSpec` (in tracejit's own optree
namespace, `NS`) with JAX's methods, JAX's repr and tracejit's errors, and what the key paths
and error messages read off a spec (each child's key entry, a node's data and description).

>>> import optree
>>> td = PyTreeDef(optree.tree_structure({"a": (1, None), "b": [2]}, namespace=NS))
>>> td, td.num_leaves, td.num_nodes, td.node_data()
(PyTreeDef({'a': (*, None), 'b': [*]}), 2, 6, (<class 'dict'>, ('a', 'b')))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import optree
from optree import PyTreeKind

from tracejit._tree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    SequenceKey,
    keystr,
)
from tracejit.errors import TracejitTypeError, TracejitValueError

NS = "tracejit"  # the optree namespace of tracejit's registered node types

_DICTS = (PyTreeKind.DICT, PyTreeKind.ORDEREDDICT, PyTreeKind.DEFAULTDICT)
_NAMED = (PyTreeKind.NAMEDTUPLE, PyTreeKind.STRUCTSEQUENCE)


class PyTreeDef:
    """The structure of a pytree, as JAX's `PyTreeDef`: hashable, comparable, picklable.

    >>> import optree
    >>> td = PyTreeDef(optree.tree_structure([0, 0], namespace=NS))
    >>> td.compose(td), td.flatten_up_to([(1, 2), 3]), td.unflatten("ab")
    (PyTreeDef([[*, *], [*, *]]), [(1, 2), 3], ['a', 'b'])
    """

    __slots__ = ("spec",)

    def __init__(self, spec: optree.PyTreeSpec):
        self.spec = spec  # the optree PyTreeSpec

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __reduce__(self):
        return PyTreeDef, (self.spec,)

    def __repr__(self) -> str:
        text, suffix = repr(self.spec), f", namespace={NS!r})"  # PyTreeSpec(...)
        text = text[: -len(suffix)] + ")" if text.endswith(suffix) else text
        return "PyTreeDef" + text[len("PyTreeSpec") :]

    @property
    def num_leaves(self) -> int:
        return self.spec.num_leaves

    @property
    def num_nodes(self) -> int:
        """Nodes and leaves (a `None` counts one, as in JAX)."""
        return self.spec.num_nodes

    def children(self) -> list[PyTreeDef]:
        """The structures of the immediate children (`[]` for a leaf or `None`)."""
        return [PyTreeDef(c) for c in self.spec.children()]

    def node_data(self) -> tuple[type, Any] | None:
        """`(node type, auxiliary data)`, None for a leaf (a dict's data: its keys)."""
        if self.spec.is_leaf():
            return None
        return self.spec.type, _jax_data(self.spec.kind, raw_data(self.spec))

    def unflatten(self, leaves: Iterable) -> Any:
        """The tree of this structure with `leaves` (as many as `num_leaves`)."""
        leaves = leaves if isinstance(leaves, (list, tuple)) else list(leaves)
        if len(leaves) != self.spec.num_leaves:
            more = "more" if len(leaves) > self.spec.num_leaves else "fewer"
            n = f"{more} leaves ({len(leaves)}) than the structure {self} holds"
            raise TracejitValueError(f"tree_unflatten: {n} ({self.spec.num_leaves})")
        return self.spec.unflatten(leaves)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this structure's leaves (it must be a prefix of
        `tree`'s structure; else a TracejitValueError saying where they part)."""
        return flatten_up_to(self, tree, "PyTreeDef.flatten_up_to", "the tree", "the treedef")

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with `inner` in place of each leaf."""
        if not isinstance(inner, PyTreeDef):
            raise TracejitTypeError(f"PyTreeDef.compose: needs a PyTreeDef, got {inner!r}")
        return PyTreeDef(self.spec.compose(inner.spec))

    def walk(self, f_node: Callable, f_leaf: Callable | None, leaves: Iterable) -> Any:
        """As JAX's: `f_leaf(leaf)` at each leaf (identity for None), and bottom-up
        `f_node(children's results as a tuple, node data)` at each node.

        >>> import optree
        >>> td = PyTreeDef(optree.tree_structure({"a": [1, 2]}, namespace=NS))
        >>> td.walk(lambda xs, data: sum(xs), lambda x: 10 * x, [1, 2])
        30
        """
        return self.spec.walk(leaves, lambda t, data, xs: f_node(tuple(xs), data), f_leaf)

    @staticmethod
    def from_node_data_and_children(
        node_data: tuple[type, Any] | None, children: Iterable[PyTreeDef]
    ) -> PyTreeDef:
        """The structure with root `node_data` (as `node_data()` gives it; None: a leaf)
        over `children`, as JAX's (without its registry argument).

        >>> leaf = PyTreeDef.from_node_data_and_children(None, [])
        >>> PyTreeDef.from_node_data_and_children((dict, ("a", "b")), [leaf, leaf])
        PyTreeDef({'a': *, 'b': *})
        """
        if node_data is None:
            return PyTreeDef(optree.treespec_leaf(namespace=NS))
        kind, data = node_data
        entry = optree.register_pytree_node.get(kind, namespace=NS)
        if entry is None:
            raise TracejitTypeError(f"{kind.__name__} is not a pytree node type")
        # the node itself, over children with placeholder leaves, flattened again
        children = [c.spec.unflatten([object()] * c.num_leaves) for c in children]
        node = entry.unflatten_func(kind if entry.kind in _NAMED else data, children)
        return PyTreeDef(optree.tree_structure(node, namespace=NS))


def raw_data(spec: optree.PyTreeSpec) -> Any:
    """optree's data of the root node of `spec` (a dict's: its keys as a list)."""
    return spec.one_level().walk(range(spec.num_children), lambda t, data, xs: data, None)


def _jax_data(kind: PyTreeKind, data) -> Any:
    """JAX's (and tracejit's) node data from optree's: dict keys as a tuple, no data for a
    namedtuple."""
    if kind in (PyTreeKind.DICT, PyTreeKind.ORDEREDDICT):
        return tuple(data)
    if kind is PyTreeKind.DEFAULTDICT:
        return data[0], tuple(data[1])
    return None if kind in _NAMED else data


def child_keys(spec: optree.PyTreeSpec) -> list[KeyEntry]:
    """The key entry of each child of the root of `spec`, as JAX names them."""
    kind, entries = spec.kind, spec.entries()
    if kind in _DICTS:
        return [DictKey(k) for k in entries]
    if kind is PyTreeKind.NAMEDTUPLE:
        return [GetAttrKey(name) for name in spec.type._fields]
    if kind is PyTreeKind.STRUCTSEQUENCE:
        return [GetAttrKey(name) for name in optree.structseq_fields(spec.type)]
    if kind in (PyTreeKind.TUPLE, PyTreeKind.LIST, PyTreeKind.DEQUE):
        return [SequenceKey(i) for i in entries]
    # a registered type: its own keys where registered with keys, else flat indices
    return [FlattenedIndexKey(k) if type(k) is int else k for k in entries]


def one_level(x) -> tuple[list, optree.PyTreeSpec]:
    """The children of `x` and the structure of its root (a leaf spec for a leaf)."""
    return optree.tree_flatten(x, lambda y: y is not x, namespace=NS)


def node_text(spec: optree.PyTreeSpec) -> str:
    if spec.is_leaf():
        return "a leaf"
    if spec.kind is PyTreeKind.NONE:
        return "None"
    what = f"keys {spec.entries()}" if spec.kind in _DICTS else f"{spec.num_children} children"
    return f"a {spec.type.__name__} node with {what}"


class _Mismatch(Exception):
    """Where `flatten_up_to` found the two structures apart: the key path is gathered while
    the walk unwinds, so the walk itself builds no paths."""

    def __init__(self, first: str, other: str):
        self.first, self.other, self.path = first, other, ()


def flatten_up_to(
    treedef: PyTreeDef, tree, what: str, which: str, prefix: str = "the first tree"
) -> list:
    """The subtrees of `tree` at the leaves of `treedef`, which must be a prefix of its
    structure with the same node types and data (JAX's `flatten_up_to`: stricter than
    optree's, which takes a dict for an OrderedDict); a named error where it is not
    (naming `tree` as `which`, and `treedef`'s tree as `prefix`)."""
    leaves, spec = optree.tree_flatten(tree, namespace=NS)
    if spec == treedef.spec:
        return leaves
    out: list = []
    try:
        _up_to(treedef.spec, tree, out)
    except _Mismatch as m:
        raise TracejitValueError(
            f"{what}: {which} has structure {PyTreeDef(spec)}, of which {prefix}'s "
            f"structure {treedef} must be a prefix; at {keystr(m.path) or 'the root'} "
            f"{prefix} has {m.first} but {which} has {m.other}"
        ) from None
    return out


def _up_to(spec: optree.PyTreeSpec, x, out: list) -> None:
    if spec.is_leaf():
        out.append(x)
        return
    children, node = one_level(x)
    if (
        node.type is not spec.type
        or node.num_children != spec.num_children
        or raw_data(node) != raw_data(spec)
    ):
        raise _Mismatch(node_text(spec), node_text(node))
    for key, child_spec, child in zip(child_keys(spec), spec.children(), children):
        try:
            _up_to(child_spec, child, out)
        except _Mismatch as m:
            m.path = (key, *m.path)
            raise
