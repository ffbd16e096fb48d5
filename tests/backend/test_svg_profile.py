"""Pictures of the compiler (`Lowered.graph_svg`, drawn by tracejit.dot) and `tj.profile` traces:
the outputs parse, say what the compiler did (every kernel a cluster, every buffer a node,
every compile phase and call an event), and load in a real browser (headless Chromium)."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tracejit as tj
from tracejit import dot
from tracejit.backend_cpu import schedule_graph
from tracejit.errors import ArgumentError
from tracejit.ir import kernel as K
from tracejit.profile import ProfileError

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")
CHROMIUM = next(
    (shutil.which(c) for c in ("chromium", "chromium-browser") if shutil.which(c)), None
)
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium to load the page in")
SVG = "{http://www.w3.org/2000/svg}"


def _softmax_grad():
    def loss(x, w):
        z = x @ w
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return ((e / e.sum(axis=1, keepdims=True)) ** 2).sum()

    args = (np.ones((4, 3), np.float32), np.ones((3, 5), np.float32))
    return tj.jit(tj.grad(loss)).lower(*args)


def test_graph_svg_without_graphviz_names_what_to_install(monkeypatch):
    monkeypatch.setattr(dot.shutil, "which", lambda name: None)
    with pytest.raises(dot.GraphvizError, match="install Graphviz"):
        _softmax_grad().graph_svg()


@needs_dot
@pytest.mark.parametrize("what", ["schedule", "ir"])
def test_graph_svg_is_valid_svg_naming_the_kernels(what):
    low = _softmax_grad()
    root = ET.fromstring(low.graph_svg(what))
    assert root.tag == f"{SVG}svg"
    titles = {t.text for t in root.iter(f"{SVG}title")}
    if what == "schedule":
        steps = schedule_graph(low.graph).steps
        fused = {s.name for s in steps if isinstance(s, K.Kernel)}
        assert fused and {f"cluster_{k}" for k in fused} <= titles
        texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
        assert all(k in texts for k in low.compile().kernels())
    else:
        assert len([t for t in titles if t.startswith("n") and t[1:].isdigit()]) == len(
            low.graph.nodes
        )


def test_graph_svg_names_a_bad_choice():
    with pytest.raises(ArgumentError, match="expected 'schedule' or 'ir'"):
        _softmax_grad().graph_svg("kernels")


def test_a_profile_records_compile_phases_inside_the_first_call_only(tmp_path):
    f = tj.jit(lambda x: np.tanh(x) * 2.0 + x.sum())
    x = np.ones((3, 4), np.float32)
    path = tmp_path / "trace.json"
    with tj.profile(path) as prof:
        f(x)
        f(x)
    events = json.loads(path.read_text())["traceEvents"]
    assert all({"name", "ph", "pid", "tid"} <= e.keys() for e in events)
    timed = [e for e in events if e["ph"] == "X"]
    assert all(e["ts"] >= 0 and e["dur"] >= 0 for e in timed)
    calls = [e for e in timed if e["cat"] == "call"]
    assert [c["args"]["signature"] for c in calls] == ["float32[3, 4]"] * 2
    compiles = [e for e in timed if e["cat"] == "compile"]
    assert {"trace", "fusion", "codegen"} <= {e["name"] for e in compiles}
    first, second = calls

    def inside(e, c):
        return c["ts"] <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 1e-3

    assert all(inside(e, first) for e in compiles)
    assert not any(inside(e, second) for e in compiles)
    assert next(iter(prof.summary())).startswith(("call", "compile"))


def test_a_profile_times_every_step_of_a_cpu_call_inside_it():
    f = tj.jit(lambda x, w: np.tanh(x @ w).sum(axis=1) - x.max(), device="cpu")
    args = (np.ones((40, 30), np.float32), np.ones((30, 50), np.float32))
    f(*args)  # compiled before the profile: the call is only the run
    with tj.profile(None) as prof:
        f(*args)
    calls = [e for e in prof.events if e[0] == "call"]
    steps = [e for e in prof.events if e[0] == "kernel"]
    assert len(calls) == 1
    compiled = f.lower(*args).compile()
    assert [e[1] for e in steps] == compiled.kernels()
    (_, _, c0, c1, _) = calls[0]
    assert all(c0 <= t0 <= t1 <= c1 for _, _, t0, t1, _ in steps)
    assert all(a[3] <= b[2] for a, b in itertools.pairwise(steps))  # in order, no overlap


def test_a_profiled_loop_gives_the_same_bits_and_times_the_loop_as_one_step():
    def f(x):
        return tj.lax.fori_loop(0, 20, lambda i, c: np.tanh(c) * 1.5 + x, x).sum()

    g = tj.jit(f, device="cpu")
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    expected = g(x)
    with tj.profile(None) as prof:
        got = g(x)
    assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()
    steps = [e[1] for e in prof.events if e[0] == "kernel"]
    assert steps == g.lower(x).compile().kernels()


def test_profiles_do_not_nest_and_nothing_is_recorded_after_one_ends(tmp_path):
    f = tj.jit(lambda x: x + 1.0)
    with tj.profile(None) as prof:
        with pytest.raises(ProfileError, match="do not nest"), tj.profile(None):
            pass
        f(np.ones(2))
    n = len(prof.events)
    f(np.ones(2))
    assert n >= 1 and len(prof.events) == n


def _chromium_dom(path) -> str:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"]
    done = subprocess.run(
        [*cmd, path.as_uri()], check=False, capture_output=True, text=True, timeout=120
    )
    return done.stdout


@needs_browser
@needs_dot
def test_chromium_loads_the_svg_without_errors(tmp_path):
    path = tmp_path / "schedule.svg"
    path.write_text(_softmax_grad().graph_svg())
    dom = _chromium_dom(path)
    assert "<svg" in dom and "cluster_" in dom
    assert "parsererror" not in dom and "This page contains the following errors" not in dom


@needs_browser
def test_chromium_parses_the_trace_as_trace_events(tmp_path):
    trace = tmp_path / "trace.json"
    with tj.profile(trace):
        tj.jit(lambda x: np.exp(x) / np.exp(x).sum())(np.ones(5, np.float32))
    page = tmp_path / "check.html"
    page.write_text(
        "<html><body><pre id=out>not run</pre><script>"
        f"const t = JSON.parse({json.dumps(trace.read_text())});"
        "const ok = t.traceEvents.every(e => e.ph === 'M' ||"
        " (e.ph === 'X' && Number.isFinite(e.ts) && Number.isFinite(e.dur)));"
        "document.getElementById('out').textContent ="
        " (ok ? 'TRACE OK ' : 'TRACE BAD ') + t.traceEvents.length;"
        "</script></body></html>"
    )
    dom = _chromium_dom(page)
    assert "TRACE OK" in dom, dom[-500:]
