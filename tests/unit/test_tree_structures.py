"""`tracejit.tree_util` on whole structures: `tree_transpose`, `tree_broadcast`,
`tree_reduce_associative`, `treedef_tuple`/`treedef_children`/`treedef_is_leaf`,
`all_leaves`, `flatten_one_level`, `is_tree_node`, `register_static`, `register_pytree_with_keys_class`, `tree.static` and the
`PyTreeDef` methods: written-out expected values, then the same calls against
`jax.tree_util`."""

from __future__ import annotations

import collections
import contextlib
import dataclasses

import numpy as np
import pytest

import tracejit as tj
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    SequenceKey,
    all_leaves,
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    keystr,
    register_dataclass,
    register_pytree_with_keys_class,
    register_static,
    tree_broadcast,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_reduce_associative,
    tree_structure,
    tree_transpose,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

S = tree_structure


@register_static
class Mode(str):
    pass


@register_pytree_with_keys_class
class Pair:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)), "aux"

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert aux == "aux"
        return cls(*children)

    def __eq__(self, other):
        return type(other) is Pair and (self.x, self.y) == (other.x, other.y)


@register_dataclass
@dataclasses.dataclass
class Op:
    x: int
    op: str = tj.tree.static(default="add")


def test_treedef_methods():
    td = S({"a": (1, None), "b": [2]})
    assert (td.num_leaves, td.num_nodes) == (2, 6)
    assert td.children() == [S((0, None)), S([0])] == treedef_children(td)
    assert td.node_data() == (dict, ("a", "b")) and S(7).node_data() is None
    assert S(None).node_data() == (type(None), None) and S(None).children() == []
    assert td.flatten_up_to({"a": ("u", None), "b": [{"q": 3}]}) == ["u", {"q": 3}]
    composed = S([0, 0]).compose(S((0, 0)))
    assert composed == S([(0, 0), (0, 0)]) and composed.num_leaves == 4
    assert S(0).compose(td) == td and S(None).compose(td) == S(None)
    assert [keystr(p) for p, _ in tree_flatten_with_path(Pair(1, 2))[0]] == [".x", ".y"]
    keyed = S(Pair(0, 0)).compose(S([0]))  # a keyed node keeps its keys when composed
    assert [keystr(p) for p, _ in tree_flatten_with_path(keyed.unflatten([5, 6]))[0]] == [
        ".x[0]",
        ".y[0]",
    ]
    with pytest.raises(
        TracejitValueError, match=r"at \['a'\]\[1\] the treedef has None but the tree has a leaf"
    ):
        td.flatten_up_to({"a": ([1], 2), "b": [3]})
    with pytest.raises(TracejitTypeError, match="compose: needs a PyTreeDef"):
        td.compose((0, 0))
    assert td.walk(lambda xs, data: (data, xs), lambda x: -x, [1, 2]) == (
        ["a", "b"],
        ((None, (-1, (None, ()))), (None, (-2,))),
    )
    rebuild = tj.tree_util.PyTreeDef.from_node_data_and_children
    for t in (td, S(None), S(7), S(Pair(1, [2])), S(Op(1)), S(Partial(max, 1, k=2))):
        assert rebuild(t.node_data(), t.children()) == t


def test_treedef_functions():
    assert treedef_tuple([S(1), S([1, 2])]) == S((0, [0, 0]))
    assert treedef_tuple(iter([])) == S(())
    assert [treedef_is_leaf(S(t)) for t in (1, None, [], [1], {"a": None})] == [
        True,
        True,
        True,
        False,
        False,
    ]  # fmt: skip (a single node: a leaf, None or an empty container, as JAX counts)
    assert treedef_children(S(5)) == []
    for bad in (lambda: treedef_tuple([S(1), (1,)]), lambda: treedef_is_leaf([1])):
        with pytest.raises(TracejitTypeError, match="needs a PyTreeDef"):
            bad()
    with pytest.raises(TracejitTypeError, match="treedef_children: needs a PyTreeDef"):
        treedef_children(None)


def test_transpose():
    tree = [(1, 2, 3), (4, 5, 6)]
    want = ([1, 4], [2, 5], [3, 6])
    assert tree_transpose(S([0, 0]), S((0, 0, 0)), tree) == want
    assert tree_transpose(S([0, 0]), None, tree) == want
    nested = {"a": {"w": 1, "b": 2}, "c": {"w": 3, "b": 4}}
    assert tj.tree.transpose(S({"a": 0, "c": 0}), None, nested) == {
        "b": {"a": 2, "c": 4},
        "w": {"a": 1, "c": 3},
    }
    with pytest.raises(TracejitTypeError, match="6 leaves, but .* has 4"):
        tree_transpose(S([0, 0]), S((0, 0)), tree)
    with pytest.raises(TracejitValueError, match="no leaves, so the inner structure"):
        tree_transpose(S([]), None, [])
    with pytest.raises(TracejitTypeError, match="tree_transpose: needs a PyTreeDef"):
        tree_transpose([0, 0], None, tree)


def test_broadcast():
    full = (0, {"a": 0, "b": 0}, (0, [0, 0]))
    assert tree_broadcast((1, 2, 3), full) == (1, {"a": 2, "b": 2}, (3, [3, 3]))
    assert tj.tree.broadcast(9, {"x": [0, 0], "y": None}) == {"x": [9, 9], "y": None}
    is_tuple = lambda x: isinstance(x, tuple)
    assert tree_broadcast([(1, 2), 3], [[0, 0], [0]], is_leaf=is_tuple) == [
        [(1, 2), (1, 2)],
        [3],
    ]
    with pytest.raises(
        TracejitValueError,
        match=r"at \[1\] prefix_tree has a list node with 2 children but full_tree has a list node with 1",
    ):
        tree_broadcast((1, [2, 3]), (0, [0]))


def test_reduce_associative_goes_by_halves():
    pair = lambda a, b: (a, b)
    assert tree_reduce_associative(pair, [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert tj.tree.reduce_associative(lambda a, b: a + b, {"b": "c", "a": ["a", "b"]}) == "abc"
    assert tree_reduce_associative(pair, [7]) == 7
    assert tree_reduce_associative(pair, [None], identity=0) == 0
    with pytest.raises(TracejitTypeError, match="needs identity="):
        tree_reduce_associative(pair, {"a": None})


def test_all_leaves():
    assert all_leaves(tree_leaves({"a": [1, 2], "b": np.ones(2)}))
    assert not all_leaves([1, None]) and not all_leaves([{"a": 1}]) and all_leaves([])
    assert not all_leaves([Mode("add")])  # a static node is a node without leaves
    is_tuple = lambda x: isinstance(x, tuple)
    assert all_leaves([(1,), 2], is_leaf=is_tuple) and not all_leaves([[1]], is_leaf=is_tuple)


Pt = collections.namedtuple("Pt", "a b")


def test_one_level_and_is_tree_node():
    assert flatten_one_level({"b": [1, 2], "a": 3}) == ([3, [1, 2]], ("a", "b"))
    assert flatten_one_level(None) == ([], None) and flatten_one_level(Pt(1, 2))[0] == [1, 2]
    od = collections.OrderedDict(b=1, a=2)
    assert flatten_one_level_with_keys(od) == ([(DictKey("b"), 1), (DictKey("a"), 2)], ("b", "a"))
    assert flatten_one_level_with_keys(Pt(1, (2,)))[0] == [
        (GetAttrKey("a"), 1),
        (GetAttrKey("b"), (2,)),
    ]
    assert flatten_one_level_with_keys(Pair(5, [6])) == (
        [(GetAttrKey("x"), 5), (GetAttrKey("y"), [6])],
        "aux",
    )
    assert flatten_one_level_with_keys(Partial(max, 1)) == (
        [(FlattenedIndexKey(0), (1,)), (FlattenedIndexKey(1), {})],
        max,
    )
    assert flatten_one_level_with_keys((4,)) == ([(SequenceKey(0), 4)], None)
    for leaf in (1, "s", np.ones(2)):
        with pytest.raises(TracejitValueError, match="flatten_one_level: a .* is a leaf"):
            flatten_one_level(leaf)
    types = (list, tuple, dict, type(None), collections.defaultdict, Pt, Pair, Mode, Op, Partial)
    assert all(is_tree_node(t) for t in types)
    assert not any(is_tree_node(t) for t in (int, str, object, np.ndarray, frozenset))
    assert is_tree_node(collections.deque)  # as optree (JAX: a leaf)
    with pytest.raises(TracejitTypeError, match="is_tree_node: needs a type"):
        is_tree_node([1])


def test_static_nodes_and_fields():
    leaves, td = tree_flatten([1.0, Mode("sub"), Op(3)])
    assert leaves == [1.0, 3] and td.children()[1].node_data() == (Mode, "sub")
    assert td.unflatten([2.0, 4]) == [2.0, Mode("sub"), Op(4, "add")]
    assert S(Mode("add")) != S(Mode("sub")) and S(Op(1, "a")) != S(Op(1, "b"))
    assert dataclasses.fields(Op)[1].metadata["static"] is True

    @tj.jit
    def f(x, mode):
        return x + 1.0 if mode == "add" else x - 1.0

    x = np.arange(3.0)
    assert np.array_equal(f(x, Mode("add")), [1.0, 2.0, 3.0])
    assert np.array_equal(f(x, Mode("sub")), [-1.0, 0.0, 1.0])
    with pytest.raises(TracejitTypeError, match="register_static: 'Unhashable' is not hashable"):

        @register_static
        class Unhashable:
            def __eq__(self, other):
                return True

    with pytest.raises(TracejitTypeError, match="has no tree_flatten_with_keys method"):
        register_pytree_with_keys_class(type("NoKeys", (), {"tree_unflatten": None}))


def test_the_same_results_as_jax():
    jtu = pytest.importorskip("jax.tree_util", reason="JAX (the comparison oracle) is absent")
    import jax

    assert set(tj.tree.__all__) <= set(dir(jax.tree))
    names = [n for n in tj.tree_util.__all__ if hasattr(jtu, n)]
    assert len(names) == len(tj.tree_util.__all__)  # every tracejit.tree_util name is JAX's
    with contextlib.suppress(ValueError):  # (registered already, when run twice in a process)
        jtu.register_pytree_with_keys_class(Pair)
    for tree in ([(1, 2, 3), (4, 5, 6)], [Pair(7, 8), Pair(9, 10)], [{"a": 1, "b": 2}]):
        outer = [0] * len(tree)
        got = tree_transpose(S(outer), None, tree)
        assert got == jtu.tree_transpose(jtu.tree_structure(outer), None, tree)
    full = {"a": [0, (0, 0)], "b": Pair(0, [0, 0])}
    for prefix in (5, {"a": 1, "b": 2}, {"a": [1, 2], "b": Pair(3, 4)}):
        assert tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    pair = lambda a, b: (a, b)
    for n in range(1, 9):
        xs = list(range(n))
        assert tree_reduce_associative(pair, xs) == jtu.tree_reduce_associative(pair, xs)
    for t in (
        1,
        None,
        [1, None],
        {"a": (1, [])},
        Pair(1, None),
        collections.OrderedDict(z=1),
        Pt(1, [2]),
    ):
        td, jtd = S(t), jtu.tree_structure(t)
        walk = lambda xs, data: (xs, data if type(data) is not list else tuple(data))
        leaves = list(range(td.num_leaves))
        assert td.walk(walk, str, leaves) == jtd.walk(walk, str, leaves)
        assert (td.num_nodes, td.num_leaves) == (jtd.num_nodes, jtd.num_leaves)
        assert treedef_is_leaf(td) == jtu.treedef_is_leaf(jtd)
        assert [c.num_nodes for c in td.children()] == [c.num_nodes for c in jtd.children()]
        assert treedef_tuple([td, td]).num_nodes == jtu.treedef_tuple([jtd, jtd]).num_nodes
        jc = jtu.tree_structure([0, 0]).compose(jtd)
        assert S([0, 0]).compose(td).num_nodes == jc.num_nodes
    is_tuple = lambda x: isinstance(x, tuple)
    for items in ([1, 2], [1, None], [[1]], [], [np.ones(2), "s"], [(1,), 2]):
        assert all_leaves(items) == jtu.all_leaves(items)
        assert all_leaves(items, is_tuple) == jtu.all_leaves(items, is_tuple)
    assert tree_broadcast([(1, 2), 3], full["a"], is_tuple) == jtu.tree_broadcast(
        [(1, 2), 3], full["a"], is_tuple
    )
    od, dd = collections.OrderedDict(b=1, a=2), collections.defaultdict(list, {"b": 1, "a": 2})
    for node in ({"b": [1], "a": 3}, od, dd, [1, (2,)], None, Pair(5, 6), (7,)):
        got, want = flatten_one_level_with_keys(node), jtu.flatten_one_level_with_keys(node)
        as_text = lambda pairs: [(repr(k), child) for k, child in pairs]  # JAX's own key types
        assert as_text(got[0]) == as_text(want[0]) and got[1] == want[1]
        assert flatten_one_level(node)[0] == list(jtu.flatten_one_level(node)[0])
    for typ in (list, type(None), Pt, collections.OrderedDict, Pair, int, str, object):
        assert is_tree_node(typ) == jtu.is_tree_node(typ)
    up_to = {"a": ("u", None), "b": [{"q": 3}]}
    assert S({"a": (0, None), "b": [0]}).flatten_up_to(up_to) == jtu.tree_structure(
        {"a": (0, None), "b": [0]}
    ).flatten_up_to(up_to)
