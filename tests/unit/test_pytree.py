"""Pytree utilities."""

import collections

import pytest

import tracejit as tj


def test_flatten_unflatten_roundtrip_nested():
    Pt = collections.namedtuple("Pt", "a b")
    tree = {"z": [1, (2, None)], "a": Pt(3, {"k": 4})}
    leaves, treedef = tj.tree_flatten(tree)
    assert leaves == [3, 4, 1, 2]  # dict keys sorted, None holds no leaf
    assert tj.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == 4


def test_tree_map_over_several_trees_and_mismatch():
    assert tj.tree_map(lambda a, b: a * b, [1, (2, 3)], [4, (5, 6)]) == [4, (10, 18)]
    with pytest.raises(ValueError, match="structures differ"):
        tj.tree_map(lambda a, b: a, [1, 2], (1, 2))


def test_tree_leaves_and_structure():
    assert tj.tree_leaves({"b": 1, "a": [2, 3]}) == [2, 3, 1]
    assert tj.tree_structure([1, 2]) == tj.tree_structure([5, 6])
    assert tj.tree_structure([1, 2]) != tj.tree_structure((1, 2))


def test_unflatten_with_too_many_leaves():
    _, treedef = tj.tree_flatten([1, 2])
    with pytest.raises(ValueError, match="more leaves"):
        tj.tree_unflatten(treedef, [1, 2, 3])


def test_register_twice_is_an_error():
    class Node:
        pass

    tj.register_pytree_node(Node, lambda n: ((), None), lambda aux, ch: Node())
    with pytest.raises(ValueError, match="already"):
        tj.register_pytree_node(Node, lambda n: ((), None), lambda aux, ch: Node())
