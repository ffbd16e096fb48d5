"""The built-in elementwise entries (ir/elementwise_ops) define tracejit.numpy's functions:
every NumPy name an entry gives is a tnp function that binds that entry's primitive and
agrees with NumPy's function of the same name."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ir.elementwise_ops import TNP_NAMES
from tracejit.ir.primitives import PRIMITIVES

# operands by wrapper style: (first operand, second operand when the primitive takes two)
_F = np.array([-2.5, -0.5, 0.0, 0.25, 0.5, 1.5, 3.0, np.inf, np.nan])
_I = np.array([-3, 0, 1, 2, 7], dtype=np.int32)
_OPERANDS = {
    "float": (_F, _F[::-1].copy()),
    "true_float": (_I, np.array([2, -4, 0, 3, 7], dtype=np.int32)),
    "rounding": (_F, None),
    "plain": (_F, _F[::-1].copy()),
    "int_bool": (_I, np.array([2, 3, 0, 3, 1], dtype=np.int32)),  # ** takes no negative int
    "logical": (_F > 0, _F < 1),
    "bitwise": (np.abs(_I), np.array([1, 0, 3, 2, 1], dtype=np.int32)),
}
# the oracles of the tnp names NumPy does not have (or no longer has)
_NOT_NUMPY = {"round_": np.round, "erf": np.vectorize(math.erf), "stop_gradient": np.asarray}
_CASES = [
    (prim, style, name)
    for prim, by_style in sorted(TNP_NAMES.items())
    for style, names in by_style.items()
    for name in names
]


@pytest.mark.parametrize(("prim", "style", "name"), _CASES)
def test_each_numpy_name_of_an_entry_binds_its_primitive(prim, style, name):
    x, y = _OPERANDS[style]
    args = (x,) if PRIMITIVES[prim].rule.arity == 1 else (x, y)
    fn = getattr(tnp, name)
    assert fn.__name__ == TNP_NAMES[prim][style][0]
    graph = tj.make_ir(fn)(*args)
    assert [n.prim.name for n in graph.nodes][-1] == prim, str(graph)
    numpy_fn = _NOT_NUMPY.get(name) or getattr(np, name)
    with np.errstate(all="ignore"):
        want = numpy_fn(*args)
        got = np.asarray(fn(*args))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
