"""tracejit.dot: the DOT pictures of a graph and of its fused schedule are well-formed and
show what the schedule does (every buffer with its type and bytes, every step, the data flow
from the inputs to the outputs)."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tracejit as tj
from tracejit import dot

NODE = re.compile(
    r"^\s*(\w+) \[(?:shape|style)=[^\n]*label=\"((?:[^\"\\]|\\.)*)\"\];$", re.MULTILINE
)
EDGE = re.compile(r"^\s*(\w+) -> (\w+)", re.MULTILINE)


def _mlp(w1, w2, x):
    return tj.nn.log_softmax(np.tanh(x @ w1) @ w2)


ARGS = (np.ones((8, 16), np.float32), np.ones((16, 4), np.float64), np.ones((32, 8), np.float32))


def _parse(text: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    assert text.count("{") == text.count("}")
    nodes = {name: label.replace("\\n", "\n") for name, label in NODE.findall(text)}
    edges = EDGE.findall(text)
    undeclared = {a for e in edges for a in e} - set(nodes)
    assert not undeclared, f"edges between undeclared nodes {undeclared}"
    return nodes, edges


def _reachable(edges, start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        n = stack.pop()
        if n not in seen:
            seen.add(n)
            stack += [b for a, b in edges if a == n]
    return seen


def test_schedule_dot_shows_buffers_steps_and_data_flow():
    lowered = tj.jit(_mlp).lower(*ARGS)
    text = dot.schedule_dot(lowered)
    nodes, edges = _parse(text)
    labels = list(nodes.values())
    # the inputs, with bytes from NumPy; the f64 weight promotes the rest to float64
    for i, a in enumerate(ARGS):
        want = f"{'f32' if a.dtype == np.float32 else 'f64'}[{','.join(map(str, a.shape))}]"
        assert any(lab.startswith(f"b{i}: {want}\n{a.nbytes} B, input {i}") for lab in labels)
    (out,) = [n for n, lab in nodes.items() if "output 0" in lab]
    assert nodes[out].split("\n")[0].endswith("f64[32,4]") and "1024 B" in nodes[out]
    assert sum("matmul (BLAS)" in lab for lab in labels) == 2
    for name in lowered.compile().kernels():
        assert name in text
    for i in range(len(ARGS)):
        assert out in _reachable(edges, f"b{i}"), f"input {i} does not reach the output"


def test_graph_dot_has_one_box_per_node_and_one_edge_per_operand():
    graph = tj.make_ir(_mlp)(*ARGS)
    nodes, edges = _parse(dot.graph_dot(graph))
    assert sum(n.startswith("n") for n in nodes) == len(graph.nodes)
    assert len(edges) == sum(len(n.inputs) for n in graph.nodes) + len(graph.outputs)
    assert sum(lab.startswith("matmul") for lab in nodes.values()) == 2
    for i in range(len(ARGS)):
        assert "out0" in _reachable(edges, f"in{i}")


def test_graphviz_renders_the_pictures_when_it_is_installed():
    """With Graphviz's `dot` on PATH, both pictures render to SVG that parses as XML."""
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (apt install graphviz)")
    lowered = tj.jit(_mlp).lower(*ARGS)
    for text in (dot.schedule_dot(lowered), dot.graph_dot(lowered)):
        svg = subprocess.run(
            ["dot", "-Tsvg"], input=text, capture_output=True, text=True, check=True
        ).stdout
        assert ET.fromstring(svg).tag.endswith("svg")
