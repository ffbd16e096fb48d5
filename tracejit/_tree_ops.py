"""Pytree operations on whole structures, as in `jax.tree_util`: `tree_transpose`,
`tree_broadcast`, `tree_reduce_associative`, `treedef_tuple`/`treedef_children`/
`treedef_is_leaf`, `all_leaves`, `flatten_one_level` and `is_tree_node`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import optree

from tracejit._tree_def import NS, PyTreeDef, child_keys, flatten_up_to, one_level
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.pytree import tree_flatten, tree_leaves, tree_structure, tree_unflatten


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """A tree of structure `outer(inner)` turned into one of structure `inner(outer)`;
    `inner_treedef=None`: the structure of the subtree at `outer`'s first leaf.

    >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0, 0))
    >>> tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)])
    ([1, 4], [2, 5], [3, 6])
    """
    _check_treedef("tree_transpose", outer_treedef)
    if inner_treedef is None:
        firsts = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not firsts:
            raise TracejitValueError(
                f"tree_transpose: the outer structure {outer_treedef} has no leaves, so the "
                "inner structure cannot be inferred; pass inner_treedef"
            )
        inner_treedef = tree_structure(firsts[0])
    _check_treedef("tree_transpose", inner_treedef)
    flat, treedef = tree_flatten(pytree_to_transpose)
    n_inner, n_outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_inner * n_outer:
        raise TracejitTypeError(
            f"tree_transpose: the tree has structure {treedef} with {treedef.num_leaves} "
            f"leaves, but {outer_treedef.compose(inner_treedef)} (outer composed with inner) "
            f"has {n_inner * n_outer}"
        )
    rows = [flat[i * n_inner : (i + 1) * n_inner] for i in range(n_outer)]
    subtrees = [tree_unflatten(outer_treedef, column) for column in zip(*rows)]
    return tree_unflatten(inner_treedef, subtrees)


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """`full_tree` with each leaf replaced by the leaf of `prefix_tree` above it
    (`prefix_tree`'s structure must be a prefix of `full_tree`'s); `is_leaf` for
    `prefix_tree`.

    >>> tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)))
    (1, {'a': 2, 'b': 2}, (3, 3))
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = flatten_up_to(treedef, full_tree, "tree_broadcast", "full_tree", "prefix_tree")
    out = [x for x, sub in zip(leaves, subtrees) for _ in range(tree_structure(sub).num_leaves)]
    return tree_unflatten(tree_structure(full_tree), out)


_NO_IDENTITY = object()


def tree_reduce_associative(
    operation: Callable, tree: Any, *, identity: Any = _NO_IDENTITY, is_leaf=None
) -> Any:
    """The leaves combined by the associative `operation` in a balanced tree (halves
    first, as JAX: a depth of log2(leaves)); `identity` for a tree without leaves.

    >>> tree_reduce_associative(lambda a, b: a + b, {"x": "a", "y": ["b", "c", "d"]})
    'abcd'
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TracejitTypeError(
                "tree_reduce_associative: a tree with no leaves needs identity="
            )
        return identity
    return _halves(leaves, operation)


def _halves(xs: list, operation: Callable) -> Any:
    if len(xs) == 1:
        return xs[0]
    mid = len(xs) // 2
    return operation(_halves(xs[:mid], operation), _halves(xs[mid:], operation))


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple of trees of the structures `treedefs`.

    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])]) == tree_structure((0, [0, 0]))
    True
    """
    treedefs = tuple(treedefs)
    for td in treedefs:
        _check_treedef("treedef_tuple", td)
    return PyTreeDef(optree.treespec_tuple([td.spec for td in treedefs], namespace=NS))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """`treedef.children()`: the structures of its immediate children."""
    return _check_treedef("treedef_children", treedef).children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is a single node: a leaf, or `None` (as JAX counts it)."""
    return _check_treedef("treedef_is_leaf", treedef).num_nodes == 1


def all_leaves(iterable: Iterable, is_leaf: Callable | None = None) -> bool:
    """Whether every element of `iterable` is a leaf (`None` is not: it is an empty node).

    >>> all_leaves([1, "a", 2.0]), all_leaves([1, None]), all_leaves([[1]])
    (True, False, False)
    """
    return optree.all_leaves(iterable, is_leaf, namespace=NS)


def flatten_one_level(tree) -> tuple[list, Any]:
    """The children of the node `tree` and its auxiliary data (a dict's: its keys); a
    TracejitValueError for a leaf.

    >>> flatten_one_level({"b": [1, 2], "a": 3})
    ([3, [1, 2]], ('a', 'b'))
    """
    children, node = _one_level("flatten_one_level", tree)
    return children, PyTreeDef(node).node_data()[1]


def flatten_one_level_with_keys(tree) -> tuple[list[tuple], Any]:
    """`flatten_one_level` with each child's key entry: `([(key, child), ...], aux)`.

    >>> flatten_one_level_with_keys([7])
    ([(SequenceKey(idx=0), 7)], None)
    """
    children, node = _one_level("flatten_one_level_with_keys", tree)
    return list(zip(child_keys(node), children)), PyTreeDef(node).node_data()[1]


def _one_level(what: str, tree) -> tuple[list, optree.PyTreeSpec]:
    children, node = one_level(tree)
    if node.is_leaf():
        raise TracejitValueError(
            f"{what}: a {type(tree).__name__} is a leaf, not a pytree node (nodes: tuple, list, "
            "dict, None, namedtuples and registered types)"
        )
    return children, node


def is_tree_node(typ: type) -> bool:
    """Whether instances of the type `typ` are pytree nodes (built in, a namedtuple or
    registered; unlike JAX, as optree: also `collections.deque` and structseqs).

    >>> is_tree_node(list), is_tree_node(type(None)), is_tree_node(int)
    (True, True, False)
    """
    if not isinstance(typ, type):
        raise TracejitTypeError(f"is_tree_node: needs a type, got {typ!r}")
    return optree.register_pytree_node.get(typ, namespace=NS) is not None


def _check_treedef(what: str, treedef) -> PyTreeDef:
    if not isinstance(treedef, PyTreeDef):
        raise TracejitTypeError(
            f"{what}: needs a PyTreeDef (from tree_structure), got {type(treedef).__name__}"
        )
    return treedef
