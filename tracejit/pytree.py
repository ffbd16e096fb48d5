"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes, as in
`jax.tree_util`, on optree (https://github.com/metaopt/optree) in tracejit's own optree
namespace (types registered here are nodes for tracejit only).

As JAX: None is a node without children, dict and defaultdict children follow the sorted
keys, OrderedDict's the insertion order. Unlike JAX (as optree): keys that do not sort
among themselves go in optree's total order (numbers first; JAX raises), a rebuilt dict has
the key order of the dict its structure came from (JAX: sorted; equal dicts either way),
and `collections.deque` and structseqs are nodes (JAX: leaves).

>>> leaves, treedef = tree_flatten({"w": 1, "b": (2, None)})
>>> leaves
[2, 1]
>>> tree_unflatten(treedef, [20, 10])
{'w': 10, 'b': (20, None)}
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import optree

from tracejit._tree_def import NS, PyTreeDef, child_keys, flatten_up_to, one_level
from tracejit._tree_keys import KeyPath, keystr
from tracejit.errors import TracejitTypeError, TracejitValueError


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Register `cls`: `flatten(obj) -> (children, aux)`, `unflatten(aux, children) -> obj`.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))
    """
    try:
        optree.register_pytree_node(cls, flatten, unflatten, namespace=NS)
    except ValueError:
        raise TracejitValueError(f"{cls.__name__} is already a pytree node type") from None
    except TypeError as e:
        raise TracejitTypeError(f"register_pytree_node: {e}") from None


def register_pytree_with_keys(
    cls: type,
    flatten_with_keys: Callable,
    unflatten: Callable,
    flatten: Callable | None = None,
) -> None:
    """Register `cls` with a key for each child, for its key paths:
    `flatten_with_keys(obj) -> (((key, child), ...), aux)` (keys such as `GetAttrKey`),
    `unflatten(aux, children) -> obj`; `flatten` (JAX's faster flatten without keys) is
    not needed: optree keeps the keys in the structure.

    >>> from tracejit.tree_util import DictKey
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

    def children_aux_keys(obj):
        pairs, aux = flatten_with_keys(obj)
        pairs = tuple(pairs)
        return [child for _, child in pairs], aux, [key for key, _ in pairs]

    register_pytree_node(cls, children_aux_keys, unflatten)


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """Leaves in order (dict keys sorted) and the structure to rebuild the tree."""
    leaves, spec = optree.tree_flatten(tree, is_leaf, namespace=NS)
    return leaves, PyTreeDef(spec)


def flatten_spec(tree) -> tuple[list, optree.PyTreeSpec]:
    """`tree_flatten` with optree's bare structure (hashed on jit's per-call path)."""
    return optree.tree_flatten(tree, namespace=NS)


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    """Rebuild a tree of `treedef`'s structure from `leaves`."""
    if not isinstance(treedef, PyTreeDef):
        raise TracejitTypeError(f"tree_unflatten: needs a PyTreeDef, got {treedef!r}")
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return optree.tree_leaves(tree, is_leaf, namespace=NS)


def tree_structure(tree, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return PyTreeDef(optree.tree_structure(tree, is_leaf, namespace=NS))


def is_pair(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is a pair's, `(a, b)` (a function's `(output, aux)` result)."""
    return treedef.spec.kind is optree.PyTreeKind.TUPLE and treedef.spec.num_children == 2


def treedef_paths(treedef: PyTreeDef) -> list[KeyPath]:
    """The key path of every leaf of `treedef`, in leaf order."""
    return _paths(treedef.spec)


def _paths(spec: optree.PyTreeSpec) -> list[KeyPath]:
    if spec.is_leaf():
        return [()]
    keys = child_keys(spec)
    return [(k, *p) for k, child in zip(keys, spec.children()) for p in _paths(child)]


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
    if is_leaf is None or not is_leaf_takes_path:
        leaves, treedef = tree_flatten(tree, is_leaf)
        return list(zip(treedef_paths(treedef), leaves)), treedef
    pairs: list = []
    verdicts: list[bool] = []  # is_leaf's, for every node optree visits, in its (pre-)order

    def walk(x, path: KeyPath) -> None:
        verdicts.append(bool(is_leaf(path, x)))
        children, node = (None, None) if verdicts[-1] else one_level(x)
        if node is None or node.is_leaf():
            pairs.append((path, x))
            return
        for key, child in zip(child_keys(node), children):
            walk(child, (*path, key))

    walk(tree, ())
    verdict = iter(verdicts)
    treedef = tree_structure(tree, lambda _: next(verdict))
    return pairs, treedef


def tree_leaves_with_path(
    tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The `(path, leaf)` pairs of `tree_flatten_with_path`.

    >>> [(keystr(p), x) for p, x in tree_leaves_with_path([5, {"k": 6}])]
    [('[0]', 5), ("[1]['k']", 6)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` leaf-wise over `tree` and the trees `rest`, as `jax.tree_util.tree_map`:
    each of `rest` has the structure of `tree` or `tree`'s as a prefix (then `f` gets the
    whole subtree where `tree` has a leaf); `is_leaf` as in `tree_flatten`, for `tree`.

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": 2}, {"x": 10, "y": 20})
    {'x': 11, 'y': 22}
    >>> tree_map(lambda a, b: (a, b), [1, 2], [(3, 4), 5])
    [(1, (3, 4)), (2, 5)]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = _others("tree_map", treedef, rest)
    return treedef.spec.unflatten([f(*xs) for xs in zip(leaves, *others)])


def _others(what: str, treedef: PyTreeDef, rest: tuple) -> list[list]:
    return [flatten_up_to(treedef, r, what, f"argument {i + 2}") for i, r in enumerate(rest)]


def tree_map_with_path(
    f: Callable, tree, *rest, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> Any:
    """`tree_map` calling `f(path, leaf, *others)` with each leaf's key path (and
    `is_leaf(path, x)` where `is_leaf_takes_path`).

    >>> tree_map_with_path(lambda p, x: keystr(p), {"a": (0, 0)})
    {'a': ("['a'][0]", "['a'][1]")}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = _others("tree_map_with_path", treedef, rest)
    return treedef.spec.unflatten([f(*p, *xs) for p, *xs in zip(pairs, *others)])


_SENTINEL = object()


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
