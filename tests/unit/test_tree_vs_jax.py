"""Random pytrees (tuples, lists, dicts, OrderedDicts, defaultdicts, namedtuples, None and a
registered class, nested) through tracejit.tree_util and jax.tree_util, the oracle: the same
leaves, node and leaf counts, key paths, mapped trees, prefix maps and pickled structures."""

from __future__ import annotations

import collections
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
from tracejit.tree_util import keystr

jtu = pytest.importorskip("jax.tree_util", reason="JAX (the comparison oracle) is absent")

Pt = collections.namedtuple("Pt", "a b")


class Cell:  # a registered class, in both libraries
    def __init__(self, items, tag):
        self.items, self.tag = items, tag

    def __eq__(self, other):
        return type(other) is Cell and (self.items, self.tag) == (other.items, other.tag)


def _flatten(c):
    return tuple(c.items), c.tag


def _unflatten(tag, children):
    return Cell(list(children), tag)


tj.tree_util.register_pytree_node(Cell, _flatten, _unflatten)
jtu.register_pytree_node(Cell, _flatten, _unflatten)

_keys = st.lists(st.sampled_from("abcde"), unique=True, max_size=3)


def _nodes(children):
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=3),
        _keys.flatmap(lambda ks: st.fixed_dictionaries({k: children for k in ks})),
        st.builds(
            lambda d: collections.OrderedDict(reversed(d.items())),
            st.dictionaries(st.sampled_from("xyz"), children, max_size=3),
        ),
        st.builds(
            lambda d: collections.defaultdict(list, d),
            st.dictionaries(st.sampled_from("pq"), children, max_size=2),
        ),
        st.builds(Pt, children, children),
        st.builds(Cell, st.lists(children, max_size=2), st.sampled_from(["s", "t"])),
    )


trees = st.recursive(st.one_of(st.integers(0, 9), st.none()), _nodes, max_leaves=12)


@given(trees)
def test_flatten_paths_map_and_pickle_as_jax(tree):
    leaves, td = tj.tree_util.tree_flatten(tree)
    jleaves, jtd = jtu.tree_flatten(tree)
    assert leaves == jleaves
    assert (td.num_leaves, td.num_nodes) == (jtd.num_leaves, jtd.num_nodes)
    got = [(keystr(p), x) for p, x in tj.tree_util.tree_flatten_with_path(tree)[0]]
    assert got == [(jtu.keystr(p), x) for p, x in jtu.tree_flatten_with_path(tree)[0]]
    assert tj.tree_util.tree_map(lambda x: x + 1, tree) == jtu.tree_map(lambda x: x + 1, tree)
    assert td.unflatten(leaves) == tree and pickle.loads(pickle.dumps(td)) == td
    assert tj.tree_util.tree_structure(pickle.loads(pickle.dumps(tree))) == td


@given(trees, st.integers(0, 3))
def test_prefix_maps_as_jax(tree, depth):
    # a prefix of the tree: its subtrees `depth` levels down replaced by leaves
    def cut(x, d):
        if d == 0 or jtu.treedef_is_leaf(jtu.tree_structure(x)):
            return 0
        return jtu.tree_map(lambda sub: cut(sub, d - 1), x, is_leaf=lambda y: y is not x)

    prefix = cut(tree, depth)
    pair = lambda p, sub: (p, jtu.tree_leaves(sub))
    assert tj.tree_util.tree_map(pair, prefix, tree) == jtu.tree_map(pair, prefix, tree)
