"""Differentiated graphs on disk (tracejit.cache.joint): a fresh process with a warm cache
loads `grad`'s joint graph instead of differentiating, and still finds the compiled function."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
from _fresh_process import run_json

import tracejit as tj
from tracejit import config
from tracejit.cache import cache_key
from tracejit.cache.joint import joint_parts

_GRAD_IN_A_FRESH_PROCESS = """
import json
import numpy as np
import tracejit as tj
from tracejit import timing

def loss(w, xs):
    h = np.zeros(4)
    for x in xs:
        h = np.tanh(x @ w + h * 0.5 + 1.0)  # constants repeat: interned across steps
    return np.sum(h ** 2)

rng = np.random.default_rng(0)
w, xs = rng.standard_normal((3, 4)), rng.standard_normal((6, 3))
with timing.collect() as phases:
    g = tj.jit(tj.grad(loss))(w, xs)
info = tj.cache_info()
print(json.dumps({"grad": g.tolist(), "phases": sorted(phases), "hits": info["hits"],
                  "misses": info["misses"]}))
"""


def _fresh_process(cache_dir, seed: str) -> dict:
    return run_json(_GRAD_IN_A_FRESH_PROCESS, cache_dir, seed)


def test_a_warm_process_loads_the_joint_graph_and_hits_the_compiled_function(tmp_path):
    cold = _fresh_process(tmp_path, "1")
    warm = _fresh_process(tmp_path, "2")  # another hash seed: bytes hash differently
    assert (cold["hits"], cold["misses"]) == (0, 1)
    assert (warm["hits"], warm["misses"]) == (1, 0), warm
    assert "autodiff" in cold["phases"] and "autodiff" not in warm["phases"]
    assert "passes" not in warm["phases"] and "c++" not in warm["phases"]
    assert warm["grad"] == cold["grad"]


def test_the_joint_key_depends_on_what_is_differentiated_and_the_output_settings(monkeypatch):
    graph = tj.make_ir(lambda x, y: np.sum(np.sin(x) * y))(np.ones(3), np.ones(3))
    what = {"wrt": [0], "seeded": [0], "remat": True}
    key = cache_key(joint_parts(graph, what))
    assert key == cache_key(joint_parts(graph, dict(what)))
    assert key != cache_key(joint_parts(graph, {**what, "wrt": [1]}))
    assert key != cache_key(joint_parts(graph, {**what, "remat": False}))
    other = tj.make_ir(lambda x, y: np.sum(np.cos(x) * y))(np.ones(3), np.ones(3))
    assert key != cache_key(joint_parts(other, what))
    monkeypatch.setattr(config, "memory_budget", 0.25)
    assert key != cache_key(joint_parts(graph, what))


_PICKLE_CONST = """
import pickle, sys
import numpy as np
from tracejit.ir.graph import ConstValue
sys.stdout.buffer.write(pickle.dumps(ConstValue(np.arange(5.0))))
"""
_COMPARE_CONST = """
import pickle, sys
import numpy as np
from tracejit.ir.graph import ConstValue
here, there = ConstValue(np.arange(5.0)), pickle.loads(sys.stdin.buffer.read())
print(there == here, hash(there) == hash(here), len({here: 1, there: 2}))
"""
_PICKLE_REGION = """
import sys
import numpy as np
import tracejit as tj
from tracejit.cache import payload
from tracejit.ir.regions import Region
graph = tj.make_ir(lambda x: np.sin(x) * 2.0)(np.ones(3))
region = Region(graph)
hash(region)
sys.stdout.buffer.write(payload.dumps((graph, region)))
"""
_COMPARE_REGION = """
import sys
from tracejit.cache import payload
from tracejit.ir.regions import Region
graph, there = payload.loads(sys.stdin.buffer.read())
here = Region(graph)
print(there == here, hash(there) == hash(here), len({here: 1, there: 2}))
"""


def _child(code, seed, data=None):
    env = dict(os.environ, PYTHONHASHSEED=seed)  # bytes and str hash differently per seed
    cmd = [sys.executable, "-c", code]
    return subprocess.run(cmd, env=env, input=data, capture_output=True, check=True).stdout


def test_a_constant_pickled_in_another_process_equals_one_made_there():
    got = _child(_COMPARE_CONST, "4", _child(_PICKLE_CONST, "3"))
    assert got.split() == [b"True", b"True", b"1"]


def test_a_region_pickled_in_another_process_equals_one_made_there():
    got = _child(_COMPARE_REGION, "4", _child(_PICKLE_REGION, "3"))
    assert got.split() == [b"True", b"True", b"1"]


def test_a_graph_with_checkpoint_marks_is_not_stored():
    # the policies live beside the graph (ir/remat.py), not in the text the key is taken from
    def f(x):
        return np.sum(tj.checkpoint(lambda x: np.sin(np.sin(x)))(x))

    what = {"wrt": [0], "seeded": [0], "remat": True}
    assert joint_parts(tj.make_ir(f)(np.ones(3)), what) is None
    assert joint_parts(tj.make_ir(lambda x: np.sum(np.sin(x)))(np.ones(3)), what) is not None


def test_a_graph_calling_a_custom_vjp_function_is_not_stored():
    # its text holds the primal graph only: two rules for one primal would share a key
    @tj.custom_vjp
    def f(x):
        return np.sin(x)

    f.defvjp(lambda x: (np.sin(x), x), lambda x, g: (g * 2.0,))
    what = {"wrt": [0], "seeded": [0], "remat": True}
    assert joint_parts(tj.make_ir(lambda x: np.sum(f(x)))(np.ones(3)), what) is None
