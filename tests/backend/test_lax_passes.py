"""Passes, the verifier and debug dumps on graphs with regions (loop and branch bodies)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.ir.graph import ConstValue, Graph, Node, VerifyError, verify
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import optimize, run_passes
from tracejit.ir.primitives import get
from tracejit.ir.regions import Region, regions_of


def _prims(graph) -> list[str]:
    return [n.prim.name for n in graph.nodes]


def _scan_node(graph):
    (node,) = [n for n in graph.nodes if n.prim.name == "scan"]
    return node


def test_identical_loops_are_traced_once_and_unused_ys_pruned():
    def f(xs):
        body = lambda c, x: (c + x, c * x)
        _, _unused = lax.scan(body, np.float64(0.0), xs)
        a, _ = lax.scan(body, np.float64(0.0), xs)
        b, _ = lax.scan(body, np.float64(0.0), xs)
        return a * b

    xs = np.arange(1.0, 4.0)
    graph = tj.make_ir(f)(xs)
    assert _prims(graph).count("scan") == 1  # equal loops are one node as they are traced
    opt = optimize(graph, verify_each=True)
    assert _prims(opt).count("scan") == 1
    assert len(_scan_node(opt).outputs) == 1  # nobody reads the ys
    np.testing.assert_array_equal(evaluate(opt, [xs]), evaluate(graph, [xs]))


def test_unused_ys_and_invariants_are_pruned_and_bodies_optimized():
    def f(w, v, xs):
        def body(c, x):
            unused = np.exp(v * x)  # only feeds a y nobody reads
            return c * w + x * 1.0 + 0.0, (c * 2.0, unused)

        c, (ys, _) = lax.scan(body, np.zeros(2), xs)
        return c, ys

    args = (np.full(2, 0.5), np.ones(2), np.ones((3, 2)))
    graph = tj.make_ir(f)(*args)
    opt = optimize(graph, verify_each=True)
    node = _scan_node(opt)
    body = node.attrs["body"].graph
    assert len(node.outputs) == 2 and len(body.outputs) == 2  # carry + the used y
    assert node.attrs["n_consts"] == 1  # w stays; v is no longer read
    assert "exp" not in _prims(body) and "mul" in _prims(body)
    assert len(body.nodes) < len(_scan_node(graph).attrs["body"].graph.nodes)
    for a, b in zip(evaluate(opt, list(args)), evaluate(graph, list(args))):
        np.testing.assert_array_equal(a, b)


def test_unused_cond_outputs_and_operands_are_pruned():
    def f(p, x, y):
        a, _ = lax.cond(p, lambda a, b: (a + 1.0, b * 2.0), lambda a, b: (a - 1.0, b), x, y)
        return a

    args = (np.bool_(True), np.ones(2), np.ones(3))
    opt = optimize(tj.make_ir(f)(*args), verify_each=True)
    (node,) = [n for n in opt.nodes if n.prim.name == "cond"]
    assert len(node.outputs) == 1 and len(node.inputs) == 2  # index and x
    np.testing.assert_array_equal(evaluate(opt, list(args))[0], np.full(2, 2.0))


def test_fold_does_not_run_loops_at_compile_time():
    traced = tj.make_ir(lambda v: lax.fori_loop(0, 3, lambda i, v: v * 2.0, v))(np.float64(1.0))
    one = Node(get("const"), [], {"value": ConstValue(np.float64(1.0))}, traced.inputs)
    graph = Graph([], [one, *traced.nodes], traced.outputs)  # every loop operand a constant
    opt, _ = run_passes(graph, verify_each=True)
    assert "scan" in _prims(opt)
    assert evaluate(opt, [])[0] == 8.0


def test_verifier_checks_region_bodies():
    graph = tj.make_ir(lambda xs: lax.scan(lambda c, x: (c + x, None), np.float64(0.0), xs))(
        np.ones(2)
    )
    verify(graph)
    body = _scan_node(graph).attrs["body"].graph
    body.nodes = []  # the body's output is now never defined
    with pytest.raises(VerifyError, match="never defined"):
        verify(graph)


def test_regions_compare_by_text_and_constant_payloads():
    g1 = tj.make_ir(lambda x: lax.map(lambda r: r + np.arange(10.0), x))(np.ones((2, 10)))
    g2 = tj.make_ir(lambda x: lax.map(lambda r: r + np.arange(10.0), x))(np.ones((2, 10)))
    g3 = tj.make_ir(lambda x: lax.map(lambda r: r + np.arange(10.0) * 2, x))(np.ones((2, 10)))
    r1, r2, r3 = (_scan_node(g).attrs["body"] for g in (g1, g2, g3))
    assert r1 == r2 and hash(r1) == hash(r2)
    assert r1 != r3  # same printed text (the array is abbreviated), different payload
    assert [name for name, _, _ in regions_of(_scan_node(g1))] == ["body"]
    assert isinstance(r1, Region)


def test_debug_dumps_show_region_bodies(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "debug_dir", str(tmp_path))

    @tj.jit
    def f(xs):
        return lax.scan(lambda c, x: (c + tnp.sin(x), c), np.float64(0.0), xs)

    f(np.ones(3))
    texts = []
    for root, _, files in os.walk(tmp_path):
        for name in files:
            with open(os.path.join(root, name), encoding="utf-8") as fh:
                texts.append(fh.read())
    assert any("scan[body={ lambda" in t and "sin" in t for t in texts)
    assert any("static int tj_region0" in t for t in texts)


def test_cond_on_a_constant_index_becomes_its_branch():
    def f(x):
        return lax.switch(np.int32(1), [lambda v: v + 1.0, lambda v: tnp.sin(v) * x], x)

    x = np.array([0.5, -2.0])
    graph = tj.make_ir(f)(x)
    assert "cond" in _prims(graph)
    opt = optimize(graph, verify_each=True)
    assert "cond" not in _prims(opt) and "sin" in _prims(opt)
    np.testing.assert_array_equal(evaluate(opt, [x])[0], np.sin(x) * x)
