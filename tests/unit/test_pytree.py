"""Pytree utilities."""

import collections

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import TracejitTypeError, TracejitValueError


def test_flatten_unflatten_roundtrip_nested():
    Pt = collections.namedtuple("Pt", "a b")
    tree = {"z": [1, (2, None)], "a": Pt(3, {"k": 4})}
    leaves, treedef = tj.tree_flatten(tree)
    assert leaves == [3, 4, 1, 2]  # dict keys sorted, None holds no leaf
    assert tj.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == 4


def test_tree_map_over_several_trees_and_mismatch():
    assert tj.tree_map(lambda a, b: a * b, [1, (2, 3)], [4, (5, 6)]) == [4, (10, 18)]
    with pytest.raises(
        TracejitValueError, match=r"PyTreeDef\(\(\*, \*\)\).*PyTreeDef\(\[\*, \*\]\)"
    ):
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


def test_ordered_and_default_dicts_are_nodes_as_in_jax():
    # they were leaves: tree_map handed f the whole dict, jit/grad refused them as arguments
    od = collections.OrderedDict([("b", 1), ("a", 2)])  # insertion order, as JAX
    dd = collections.defaultdict(list, {"b": 1, "a": 2})  # sorted keys, as dict
    assert tj.tree_util.tree_leaves(od) == [1, 2]
    assert tj.tree_util.tree_leaves(dd) == [2, 1]
    doubled = tj.tree_util.tree_map(lambda x: 2 * x, dd)
    assert type(doubled) is collections.defaultdict and doubled.default_factory is list
    assert doubled == {"a": 4, "b": 2}
    assert list(tj.tree_util.tree_map(lambda x: x + 1, od).items()) == [("b", 2), ("a", 3)]
    params = collections.OrderedDict([("w", np.array([1.0, 2.0])), ("b", np.array(0.5))])
    grads = tj.grad(lambda p: tnp.sum(p["w"] ** 2) * p["b"])(params)
    assert list(grads) == ["w", "b"]
    np.testing.assert_allclose(grads["w"], [1.0, 2.0])  # d/dw of b * sum(w^2) = 2 b w
    np.testing.assert_allclose(grads["b"], 5.0)
    assert tj.pytree.keystr_paths(tj.tree_structure(od), "p") == ["p['b']", "p['a']"]


def test_is_leaf_unflatten_method_and_named_errors():
    tree = {"a": [1, 2], "b": [3]}
    is_list = lambda x: isinstance(x, list)
    assert tj.tree_util.tree_map(len, tree, is_leaf=is_list) == {"a": 2, "b": 1}
    assert tj.tree_util.tree_leaves(tree, is_leaf=is_list) == [[1, 2], [3]]
    assert tj.tree_util.tree_structure(tree, is_leaf=is_list).num_leaves == 2
    assert tj.tree_structure((1, [2])).unflatten([5, 6]) == (5, [6])
    with pytest.raises(TracejitValueError, match="fewer leaves"):  # was a bare StopIteration
        tj.tree_unflatten(tj.tree_structure((1, 2)), [1])
    with pytest.raises(TracejitValueError, match="more leaves"):
        tj.tree_structure([1]).unflatten([1, 2])
    with pytest.raises(TracejitTypeError, match="needs a PyTreeDef"):
        tj.tree_unflatten((1, 2), [1, 2])


def test_where_optree_departs_from_jax():
    # keys that do not sort among themselves go in optree's total order, numbers before
    # strings, whatever the insertion order (JAX raises)
    mixed = {"a": "y", 1: "x"}
    assert tj.tree_leaves(mixed) == ["x", "y"] == tj.tree_leaves({1: "x", "a": "y"})
    assert tj.tree_map(lambda a, b: a + b, mixed, {1: "1", "a": "2"}) == {1: "x1", "a": "y2"}
    # a deque is a node (JAX: a leaf), as PyTorch's and optree's pytrees
    dq = collections.deque([1, 2], maxlen=3)
    doubled = tj.tree_map(lambda v: 2 * v, dq)
    assert type(doubled) is collections.deque and list(doubled) == [2, 4] and doubled.maxlen == 3
