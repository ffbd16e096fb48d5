"""Helpers shared by the graph-pass tests: build IR from a function, constants, goldens.

Goldens were written by hand from the expected IR (names are assigned in printing order);
`check_golden` also checks the input graph is left untouched (jit caches traced graphs).
"""

from __future__ import annotations

import textwrap

import numpy as np

import tracejit as tj
from tracejit.ir.graph import Graph, verify
from tracejit.numpy._core import constant
from tracejit.tracer.core import bind

F32 = np.dtype(np.float32)


def ir(fn, *shapes, dtype=np.float32) -> Graph:
    return tj.make_ir(fn)(*[np.ones(s, dtype) for s in shapes])


def splat(like, c):
    """A Python-scalar constant as tnp emits it: a 0-d const broadcast to `like`'s shape."""
    c0 = constant(c, like.dtype, False, like._trace)
    return bind("broadcast_in_dim", c0, shape=like.shape, dims=())


def const(like, array):
    """A materialized const node in `like`'s trace."""
    return constant(np.asarray(array), np.asarray(array).dtype, False, like._trace)


def text(s: str) -> str:
    return textwrap.dedent(s).strip()


def check_golden(graph: Graph, pass_fn, before: str, after: str) -> Graph:
    assert str(graph) == text(before)
    out = pass_fn(graph)
    verify(out)
    assert str(out) == text(after)
    assert str(graph) == text(before), "the pass mutated its input graph"
    return out


IDENTITY_23 = """
{ lambda a:f32[2,3] . let
  in (a,) }
"""
