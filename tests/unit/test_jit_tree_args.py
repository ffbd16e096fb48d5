"""jit's fast path for pytree arguments: a call whose leaves are all host arrays is looked up
by the arguments' structure (optree's) and the leaves' shapes and dtypes, skipping the
general dispatch. On the reference interpreter (device="numpy"): the lookup, not a backend,
is tested; the expected values are NumPy's."""

from __future__ import annotations

import collections

import numpy as np

import tracejit as tj

F32 = np.float32


def test_the_structure_is_part_of_the_key():
    # one executable per structure: a dict with key "b" doubles, any other triples
    f = tj.jit(lambda p: p["a"] * 2 if "b" in p else p["a"] * 3, device="numpy")
    a, b = np.arange(3, dtype=F32), np.ones(3, F32)
    for _ in range(2):  # the second round takes the fast path
        np.testing.assert_array_equal(f({"a": a, "b": b}), a * 2)
        np.testing.assert_array_equal(f({"a": a, "c": b}), a * 3)
        np.testing.assert_array_equal(f({"a": a}), a * 3)
    assert len(f._fast) == 3  # (white box: all three calls were keyed for the fast path)


def test_leaf_order_dtype_and_outputs():
    f = tj.jit(lambda p, x: {"d": p["a"] - p["b"], "t": (x, None)}, device="numpy")
    a, b, x = np.arange(3, dtype=F32), np.full(3, 10, F32), np.ones(2, F32)
    od = collections.OrderedDict([("b", b), ("a", a)])  # its leaves in insertion order
    for _ in range(2):
        for p in ({"a": a, "b": b}, od):
            out = f(p, x)
            assert list(out) == ["d", "t"] and out["t"][1] is None
            np.testing.assert_array_equal(out["d"], a - b)
            np.testing.assert_array_equal(out["t"][0], x)
    # jit's own results (ConstArray views) as leaves, and a float64 leaf: another key
    out = f(od, x)
    np.testing.assert_array_equal(f({"a": out["d"], "b": b}, x)["d"], a - b - b)
    np.testing.assert_array_equal(f({"a": a.astype(np.float64), "b": b}, x)["d"], a - b)


def test_keyword_arguments_are_keyed_by_name_and_static_ones_by_value():
    f = tj.jit(lambda x, y=None, z=None: x * 2 if z is None else x * 3, device="numpy")
    g = tj.jit(lambda x, *, k: x * k, static_argnames="k", device="numpy")  # (keyword-only)
    a, b = np.arange(3, dtype=F32), np.ones(3, F32)
    for _ in range(2):
        np.testing.assert_array_equal(f(a, y=b), a * 2)
        np.testing.assert_array_equal(f(a, z=b), a * 3)
        np.testing.assert_array_equal(f(x=a, z=b), a * 3)
        np.testing.assert_array_equal(f(a, b), a * 2)
        np.testing.assert_array_equal(g(a, k=2), a * 2)
        np.testing.assert_array_equal(g(a, k=3), a * 3)


def test_keyword_arguments_are_not_a_trailing_positional_dict():
    # f((x, y), {"k": z}) and f(x, y, k=z) flatten to the same structure and leaves when the
    # keywords are flattened beside the positional tuple: their keys must still differ
    f = tj.jit(lambda a, b=None, k=None: a[0] + b["k"] if k is None else a - b + k, device="numpy")
    x, y, z = (np.full(2, v, F32) for v in (1, 2, 10))
    for _ in range(2):
        np.testing.assert_array_equal(f((x, y), {"k": z}), x + z)
        np.testing.assert_array_equal(f(x, y, k=z), x - y + z)
    assert len(f._fast) == 2
