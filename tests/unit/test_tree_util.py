"""`tracejit.tree_util` beyond flatten/map: key paths (`tree_flatten_with_path`,
`tree_map_with_path`, `keystr`, the key entry types), `tree_map` over trees that have the
first tree's structure as a prefix, `tree_reduce`, `tree_all`, `register_pytree_node_class`
and `Partial`: written-out expected values, then the same calls against `jax.tree_util`."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    SequenceKey,
    keystr,
    register_dataclass,
    register_pytree_node_class,
    register_pytree_with_keys,
    tree_all,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
)

Pt = collections.namedtuple("Pt", "a b")


@register_pytree_node_class
class Box:
    def __init__(self, items, label):
        self.items, self.label = items, label

    def tree_flatten(self):
        return tuple(self.items), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(list(children), label)


def _tree():
    od = collections.OrderedDict([("y", 5), ("x", 6)])
    return {"b": [1, (2, None)], "a": Pt(3, {"z": 4}), "c": od, "d": Box([7, 8], "tag")}


def test_paths_follow_the_leaf_order_with_jax_s_entries():
    pairs, treedef = tree_flatten_with_path(_tree())
    assert [leaf for _, leaf in pairs] == [3, 4, 1, 2, 5, 6, 7, 8] == tree_leaves(_tree())
    assert treedef == tree_structure(_tree())
    assert pairs[1][0] == (DictKey("a"), GetAttrKey("b"), DictKey("z"))
    assert pairs[3][0] == (DictKey("b"), SequenceKey(1), SequenceKey(0))
    assert pairs[7][0] == (DictKey("d"), FlattenedIndexKey(1))
    assert [keystr(p) for p, _ in pairs] == [
        "['a'].a", "['a'].b['z']", "['b'][0]", "['b'][1][0]", "['c']['y']", "['c']['x']",
        "['d'][<flat index 0>]", "['d'][<flat index 1>]",
    ]  # fmt: skip
    assert keystr(pairs[1][0], simple=True, separator="/") == "a/b/z"
    assert tree_flatten_with_path(5)[0] == [((), 5)] and tree_flatten_with_path(None)[0] == []
    is_list = lambda x: isinstance(x, list)
    assert tree_flatten_with_path({"a": [1], "b": 2}, is_leaf=is_list)[0] == [
        ((DictKey("a"),), [1]),
        ((DictKey("b"),), 2),
    ]


def test_is_leaf_may_take_the_path():
    tree = {"a": [1, 2], "b": {"c": [3]}}
    top_lists = lambda p, x: len(p) == 1 and isinstance(x, list)
    pairs, _ = tree_flatten_with_path(tree, is_leaf=top_lists, is_leaf_takes_path=True)
    assert pairs == [((DictKey("a"),), [1, 2]), ((DictKey("b"), DictKey("c"), SequenceKey(0)), 3)]
    got = tree_map_with_path(
        lambda p, x: len(x) if isinstance(x, list) else -x,
        tree,
        is_leaf=lambda p, x: p == (DictKey("b"), DictKey("c")),
        is_leaf_takes_path=True,
    )
    assert got == {"a": [-1, -2], "b": {"c": 1}}
    assert tree_leaves_with_path(tree, is_leaf=lambda p, x: p == (), is_leaf_takes_path=True) == [
        ((), tree)
    ]


def test_tree_map_with_path_and_prefix_trees():
    got = tree_map_with_path(lambda p, x, y: f"{keystr(p)}={x + y}", {"k": (1, 2)}, {"k": (3, 4)})
    assert got == {"k": ("['k'][0]=4", "['k'][1]=6")}
    # where the first tree has a leaf, f gets the other tree's whole subtree there
    got = tree_map(lambda x, sub: (x, sub), {"a": 1, "b": None}, {"a": [2, {"q": 3}], "b": None})
    assert got == {"a": (1, [2, {"q": 3}]), "b": None}
    assert type(tree_map(lambda x: x, Box([1], "t"))) is Box


@pytest.mark.parametrize(
    "first, other, where",
    [
        ([1, 2], [1, 2, 3], "at the root the first tree has a list node with 2 children"),
        ({"a": 1}, {"b": 1}, "keys ['a'] but argument 2 has a dict node with keys ['b']"),
        (
            {"a": [None]},
            {"a": [1]},
            "at ['a'][0] the first tree has None but argument 2 has a leaf",
        ),
        (
            (1, [2]),
            (1, 2),
            "at [1] the first tree has a list node with 1 children but argument 2 has a leaf",
        ),
        ({"a": 1}, collections.OrderedDict(a=1), "argument 2 has a OrderedDict node"),
    ],
)
def test_tree_map_names_both_structures_where_they_differ(first, other, where):
    with pytest.raises(TracejitValueError) as info:
        tree_map(lambda *xs: xs, first, other)
    text = str(info.value)
    assert str(tree_structure(first)) in text and str(tree_structure(other)) in text
    assert where in text


def test_reduce_and_all():
    assert tree_reduce(lambda a, b: a * 10 + b, {"y": [2, 3], "x": 1}) == 123
    assert tree_reduce(lambda a, b: a + b, [], 7) == 7
    assert tree_reduce(lambda a, b: a + [b], (1, None, 2), []) == [1, 2]
    with pytest.raises(TracejitTypeError, match="initializer"):
        tree_reduce(lambda a, b: a + b, {"a": None})
    assert tree_all([1, (True, None)]) and tree_all([]) and not tree_all({"a": 1, "b": 0})
    assert tree_all({"a": []}) and not tree_all({"a": []}, is_leaf=lambda x: isinstance(x, list))


def test_register_pytree_node_class_needs_both_methods():
    class NoMethods:
        pass

    with pytest.raises(TracejitTypeError, match="tree_flatten or tree_unflatten"):
        register_pytree_node_class(NoMethods)


@register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object = None
    name: str = dataclasses.field(default="dense", metadata={"static": True})


class Scope:  # children named by DictKey in its key paths
    def __init__(self, **entries):
        self.entries = entries


register_pytree_with_keys(
    Scope,
    lambda s: ([(DictKey(k), s.entries[k]) for k in sorted(s.entries)], tuple(sorted(s.entries))),
    lambda names, children: Scope(**dict(zip(names, children))),
)


def test_register_dataclass_and_keyed_registration():
    pairs, treedef = tree_flatten_with_path(Layer(1, (2, 3)))
    assert pairs == [
        ((GetAttrKey("w"),), 1),
        ((GetAttrKey("b"), SequenceKey(0)), 2),
        ((GetAttrKey("b"), SequenceKey(1)), 3),
    ]
    assert tree_map(lambda v: 10 * v, Layer(1, 2, "x")) == Layer(10, 20, "x")
    assert treedef != tree_structure(Layer(1, (2, 3), "other"))  # name: static metadata
    assert tree_leaves(Layer(1)) == [1]  # b=None: a node without leaves
    paths = [keystr(p) for p, _ in tree_flatten_with_path({"s": Scope(y=1, x=[2])})[0]]
    assert paths == ["['s']['x'][0]", "['s']['y']"]
    assert tree_map(lambda v: -v, Scope(a=1)).entries == {"a": -1}
    assert tree_structure(Scope(a=1)) == tree_structure(Scope(a=2)) != tree_structure(Scope(b=1))
    g = tj.grad(lambda layer: layer.w * layer.b)(Layer(np.float64(2.0), np.float64(3.0), "x"))
    assert (type(g), float(g.w), float(g.b), g.name) == (Layer, 3.0, 2.0, "x")


def test_register_dataclass_by_names_and_its_errors():
    class Plain:
        def __init__(self, x, k):
            self.x, self.k = x, k

    register_dataclass(Plain, data_fields=["x"], meta_fields=["k"])
    assert tree_leaves(Plain([1, 2], "static")) == [1, 2]
    assert tree_map(lambda v: v + 1, Plain(1, "s")).k == "s"
    with pytest.raises(TracejitTypeError, match="both data_fields and meta_fields"):
        register_dataclass(Plain, data_fields=["x"])
    with pytest.raises(TracejitTypeError, match="not a dataclass"):
        register_dataclass(type("Other", (), {}))

    @dataclasses.dataclass
    class Two:
        x: int
        y: int

    with pytest.raises(TracejitValueError, match=r"wrong: \['y'\]"):
        register_dataclass(Two, data_fields=["x"], meta_fields=[])
    register_dataclass(Two, drop_fields=["y"])
    assert tree_leaves(Two(1, 2)) == [1]


def _f(*args, **kwargs):
    return args, kwargs


def test_partial_is_a_pytree_of_its_bound_arguments():
    p = Partial(_f, 1, 2, k=3)
    assert tree_leaves(p) == [1, 2, 3] and p(4) == ((1, 2, 4), {"k": 3})
    doubled = tree_map(lambda v: 2 * v, p)
    assert type(doubled) is Partial and doubled(0) == ((2, 4, 0), {"k": 6})
    inner = functools.partial(_f, 7)  # its 7 stays in the static function, not a leaf
    nested = Partial(inner, 8)
    assert tree_leaves(nested) == [8] and nested(9) == ((7, 8, 9), {})
    assert tree_structure(nested) == tree_structure(Partial(inner, 0))
    assert tree_structure(p) != tree_structure(Partial(max, 1, 2, k=3))


def test_partial_as_an_argument_of_jit_and_grad():
    w, x = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    p = Partial(lambda w, x, b: tnp.sum(w * x) + b, w, b=np.float64(0.5))
    assert float(tj.jit(lambda p, x: p(x), device="numpy")(p, x)) == 11.5
    g = tj.grad(lambda p: p(x))(p)
    assert type(g) is Partial
    np.testing.assert_array_equal(g.args[0], x)  # d/dw sum(w x) + b = x
    assert float(g.keywords["b"]) == 1.0


def test_tree_is_jax_tree_s_short_names():
    for name in set(tj.tree.__all__) - {"static"}:  # (`static`: a dataclass field maker)
        assert getattr(tj.tree, name) is getattr(tj.tree_util, f"tree_{name}")
    assert tj.tree.map(lambda a, b: a - b, {"x": 5}, {"x": 2}) == {"x": 3}


def test_the_same_results_as_jax():
    jtu = pytest.importorskip("jax.tree_util", reason="JAX (the comparison oracle) is absent")
    import jax

    assert set(tj.tree.__all__) <= set(dir(jax.tree))
    with contextlib.suppress(ValueError):  # (registered already, when run twice in a process)
        jtu.register_pytree_node(Box, Box.tree_flatten, Box.tree_unflatten)
    tree = _tree()
    pairs, jpairs = tree_flatten_with_path(tree)[0], jtu.tree_flatten_with_path(tree)[0]
    assert [(keystr(p), x) for p, x in pairs] == [(jtu.keystr(p), x) for p, x in jpairs]
    for (p, _), (jp, _) in zip(pairs, jpairs):
        assert [repr(k) for k in p] == [repr(k) for k in jp]  # e.g. "DictKey(key='a')"
    rest = (jtu.tree_map(lambda x: 100 * x, tree),)
    want = jtu.tree_map(lambda *xs: xs, tree, *rest)
    got = tree_map(lambda *xs: xs, tree, *rest)
    assert jtu.tree_leaves(got, is_leaf=lambda x: isinstance(x, tuple) and len(x) == 2) == (
        jtu.tree_leaves(want, is_leaf=lambda x: isinstance(x, tuple) and len(x) == 2)
    )
    prefix = {"a": 0, "b": [1, 2], "c": 3, "d": 4}
    assert tree_map(lambda x, s: (x, s), prefix, tree) == jtu.tree_map(
        lambda x, s: (x, s), prefix, tree
    )
    add = lambda a, b: a * 10 + b
    assert tree_reduce(add, tree) == jtu.tree_reduce(add, tree)
    for t in ([1, (0, None)], [], {"a": 2}):
        assert tree_all(t) == jtu.tree_all(t)
    for first, other in ([[1, 2], [1, 2, 3]], [{"a": 1}, {"b": 1}], [[None], [1]], [(1,), [1]]):
        with pytest.raises(ValueError):
            jtu.tree_map(lambda *xs: xs, first, other)
        with pytest.raises(ValueError):
            tree_map(lambda *xs: xs, first, other)
    assert tree_leaves(Partial(_f, 1, k=2)) == jtu.tree_leaves(jtu.Partial(_f, 1, k=2))
    with contextlib.suppress(ValueError):
        jtu.register_dataclass(Layer)
    layer = Layer({"u": 1, "v": [2, None]}, (3,), "x")
    got, want = tree_flatten_with_path(layer)[0], jtu.tree_flatten_with_path(layer)[0]
    assert [(keystr(p), x) for p, x in got] == [(jtu.keystr(p), x) for p, x in want]
    by_path = lambda p, x: len(p) == 1 and isinstance(x, list)
    tree = {"a": [1, [2]], "b": [{"c": [3]}]}
    got = tree_flatten_with_path(tree, is_leaf=by_path, is_leaf_takes_path=True)[0]
    want = jtu.tree_flatten_with_path(tree, is_leaf=by_path, is_leaf_takes_path=True)[0]
    assert [(keystr(p), x) for p, x in got] == [(jtu.keystr(p), x) for p, x in want]
