"""Deferred joint graphs (tracejit.cache.deferred): jit's first trace records `grad`'s joint
graph as one node; expanded, the graph is exactly the one the trace records without it, and a
warm fresh process finds the compiled function without loading the joint graph."""

from __future__ import annotations

import numpy as np
import pytest
from _fresh_process import run_json

import tracejit as tj
import tracejit.tracer.jit as jit_module
from tracejit import cache, config
from tracejit.cache import deferred
from tracejit.cache.graph_key import graph_fingerprint


def _rnn(w, xs):
    h = np.zeros(4)
    for x in xs:
        h = np.tanh(x @ w + h * 0.5 + 1.0)
    return np.sum(h**2)


def _two_args(w, b, x):
    return np.sum(np.sin(x @ w + b)), np.max(b)


def _aux(w, x):
    y = np.tanh(x @ w)
    return np.sum(y * y), y


def _dict_loss(p, xs):
    return _rnn(p["w"], xs) + np.sum(p["b"])


PROGRAMS = {
    "grad of an unrolled loop": lambda w, b, xs: tj.grad(_rnn)(w, xs),
    "grad, then more ops on it": lambda w, b, xs: tj.grad(_rnn)(w, xs) * 2.0 + w,
    "value_and_grad, two argnums": lambda w, b, xs: tj.value_and_grad(
        lambda w, b, x: _two_args(w, b, x)[0], argnums=(0, 1)
    )(w, b, xs),
    "has_aux": lambda w, b, xs: tj.grad(_aux, has_aux=True)(w, xs),
    "twice, interned": lambda w, b, xs: tj.grad(_rnn)(w, xs) + tj.grad(_rnn)(w, xs),
    "a dict of parameters": lambda w, b, xs: tj.grad(_dict_loss)({"w": w, "b": b}, xs),
}


def _args():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((5, 3))


def _traced(fun, defer: bool):
    token = deferred.DEFER.set(defer)
    try:
        return tj.make_ir(fun)(*_args())
    finally:
        deferred.DEFER.reset(token)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_expanded_graph_is_the_graph_the_trace_records(name):
    fun = PROGRAMS[name]
    with_node = _traced(fun, defer=True)
    assert deferred.has_deferred(with_node)
    expanded = deferred.expand(with_node)
    assert expanded is not None
    assert not deferred.has_deferred(expanded)
    assert graph_fingerprint(expanded) == graph_fingerprint(_traced(fun, defer=False))


def test_grad_in_a_nested_trace_is_not_deferred():
    # grad under vmap inside jit records into vmap's trace, not jit's: inlined as always
    def f(w, b, xs):
        return tj.vmap(lambda x: tj.grad(lambda w: np.sum(np.sin(x @ w)))(w))(xs)

    assert not deferred.has_deferred(_traced(f, defer=True))


def test_wrong_derived_types_fall_back_to_tracing_again(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    real = deferred.joint_avals

    def wrong(graph, wrt):  # every gradient said to be weak: expand must notice
        return tuple((s, d, True) for s, d, _ in real(graph, wrt))

    expanded = []
    real_expand = deferred.expand
    monkeypatch.setattr(deferred, "joint_avals", wrong)
    monkeypatch.setattr(deferred, "expand", lambda g: expanded.append(real_expand(g)))
    w, b, xs = _args()
    got = tj.jit(PROGRAMS["grad, then more ops on it"])(w, b, xs)
    assert expanded == [None]
    np.testing.assert_allclose(got, tj.grad(_rnn)(w, xs) * 2.0 + w, rtol=1e-12)


def test_a_python_scalar_argument_is_differentiated_through_the_deferred_node(monkeypatch):
    expanded = []
    real_expand = deferred.expand
    monkeypatch.setattr(
        deferred, "expand", lambda g: expanded.append(real_expand(g)) or expanded[-1]
    )
    graph = _traced(lambda w, b, xs: tj.grad(_scaled, argnums=(0, 1))(w, 2.0), defer=True)
    full = deferred.expand(graph)
    assert full is not None  # a weak (Python float) input's cotangent type was derived right
    assert graph_fingerprint(full) == graph_fingerprint(
        _traced(lambda w, b, xs: tj.grad(_scaled, argnums=(0, 1))(w, 2.0), defer=False)
    )
    w = _args()[0]
    got = tj.jit(tj.grad(_scaled, argnums=(0, 1)))(w, 2.0)
    want = tj.grad(_scaled, argnums=(0, 1))(w, 2.0)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert expanded and all(e is not None for e in expanded)


def test_the_key_is_the_same_when_lower_or_another_device_traced_the_signature_first(
    monkeypatch, tmp_path
):
    # lower() and device="numpy" trace without deferring; jit's key must still be the one
    # a fresh jit(grad(f)) takes (a warm disk cache is found, nothing compiled again)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    keys = []
    real = jit_module.load_cached

    def spy(parts, device, name="function"):
        if device != "numpy":  # which has no key
            keys.append(cache.cache_key(parts))
        return real(parts, device, name)

    monkeypatch.setattr(jit_module, "load_cached", spy)
    w, _, xs = _args()
    before = tj.cache_info()
    want = tj.jit(tj.grad(_rnn))(w, xs)
    lowered_first = tj.jit(tj.grad(_rnn))
    lowered_first.lower(w, xs)
    got = [lowered_first(w, xs)]
    numpy_first = tj.jit(tj.grad(_rnn))
    monkeypatch.setattr(config, "default_device", "numpy")
    np.testing.assert_allclose(numpy_first(w, xs), want, rtol=1e-12)
    monkeypatch.setattr(config, "default_device", "cpu")
    got.append(numpy_first(w, xs))
    assert len(keys) == 3 and len(set(keys)) == 1, keys
    info = tj.cache_info()
    assert (info["hits"] - before["hits"], info["misses"] - before["misses"]) == (2, 1)
    for g in got:
        np.testing.assert_array_equal(g, want)


def _scaled(w, s):
    return np.sum(np.sin(w) * s)


_WARM = """
import json
import numpy as np
import tracejit as tj
from tracejit.cache import joint

loads = []
real_load = joint._load
joint._load = lambda path: loads.append(path) or real_load(path)

def loss(w, xs):
    h = np.zeros(4)
    for x in xs:
        h = np.tanh(x @ w + h * 0.5 + 1.0)
    return np.sum(h ** 2)

rng = np.random.default_rng(0)
w, xs = rng.standard_normal((3, 4)), rng.standard_normal((6, 3))
step = tj.jit(tj.grad(loss))
g = step(w, xs)
info, joint_loads = tj.cache_info(), len(loads)
(executable, _), = step._executables.values()
lazy = callable(executable._schedule)  # not unpickled by the hit (cpu backend)
print(json.dumps({"grad": g.tolist(), "eager": tj.grad(loss)(w, xs).tolist(),
                  "joint_loads": joint_loads, "hits": info["hits"], "misses": info["misses"],
                  "lazy": lazy, "kernels": executable.kernels()}))
"""


def test_a_warm_process_finds_jit_grad_without_loading_the_joint_graph_or_schedule(tmp_path):
    cold = run_json(_WARM, tmp_path, "1")
    warm = run_json(_WARM, tmp_path, "2")
    assert (cold["hits"], cold["misses"], warm["hits"], warm["misses"]) == (0, 1, 1, 0)
    assert warm["joint_loads"] == 0
    # the hit unpickled only what running needs; the schedule comes when asked for
    assert warm["lazy"] and warm["kernels"] == cold["kernels"] and len(warm["kernels"]) > 1
    np.testing.assert_allclose(warm["grad"], cold["eager"], rtol=1e-12)
    assert warm["grad"] == cold["grad"]
